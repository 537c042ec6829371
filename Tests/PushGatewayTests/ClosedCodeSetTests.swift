import CredentialFormats
import Foundation
import LocalGateway
import PushCore
import PushGateway
import Testing

/// Each module's error has a closed set of codes of its own, bridged to the one ``ErrorCode``
/// every report gives: each constant names one JSON string, no two the same, and the string
/// finds the constant again.
struct ClosedCodeSetTests {
    /// The JSON strings of a set, in order; fails on a string given twice or one that does not
    /// find its constant again.
    static func strings<Code: Hashable>(
        _ all: [Code],
        errorCode: (Code) -> ErrorCode,
        reported: (ErrorCode) -> Code?
    ) -> [String] {
        let strings = all.map { errorCode($0).rawValue }
        #expect(Set(strings).count == strings.count, "a JSON string is given twice: \(strings)")
        for code in all { #expect(reported(errorCode(code)) == code) }
        return strings
    }

    @Test func credentialErrorCodesRoundTrip() throws {
        let strings = Self.strings(
            CredentialError.Code.all,
            errorCode: \.errorCode,
            reported: CredentialError.Code.init(reported:)
        )
        #expect(strings.count == 54)
        #expect(strings.contains("wrong_password") && strings.contains("not_exportable"))
        #expect(CredentialError.Code.wrongPassword.errorCode == ErrorCode.wrongPassword)
        #expect(CredentialError.Code.tooLarge == .fileTooLarge)
        #expect(CredentialError.Code(reported: .tlsUntrusted) == nil, "a gateway's code is not a credential's")
        let error = CredentialError.wrongPassword(path: "a.p12", "Wrong password.")
        #expect(error.code == .wrongPassword)
        #expect(error.reportedCode == .wrongPassword)
        #expect((error as any ReportableError).code == ErrorCode("wrong_password"))
        #expect(error.reported.code == "wrong_password")
        #expect(String(describing: error.code) == "wrong_password")
    }

    @Test func gatewayErrorCodesRoundTrip() throws {
        let strings = Self.strings(
            GatewayError.Code.all,
            errorCode: \.errorCode,
            reported: GatewayError.Code.init(reported:)
        )
        #expect(strings.count == 31)
        #expect(strings.contains("client_certificate_rejected") && strings.contains("file_too_large"))
        let error = GatewayError.connectionRefused("127.0.0.1:1")
        #expect(error.code == .connectionRefused)
        #expect(error.reported.code == "connection_refused")
        #expect(GatewayError.Code(reported: .wrongPassword) == nil)
    }

    @Test func pushCoreErrorCodesRoundTrip() throws {
        let strings = Self.strings(
            PushCoreError.Code.all,
            errorCode: \.errorCode,
            reported: PushCoreError.Code.init(reported:)
        )
        #expect(
            strings == [
                "invalid_device_token", "invalid_notification", "invalid_time", "invalid_live_activity",
                "invalid_channel", "invalid_key_id", "invalid_team_id", "invalid_key", "write_failed",
            ]
        )
        let error = PushCoreError.invalidTime("It has passed.")
        #expect(error.code == .invalidTime)
        #expect(error.failure == .invalidRequest)
        #expect(error.reported.code == "invalid_time")
    }

    @Test func localGatewayErrorCodesRoundTrip() throws {
        let strings = Self.strings(
            LocalGatewayError.Code.all,
            errorCode: \.errorCode,
            reported: LocalGatewayError.Code.init(reported:)
        )
        #expect(
            strings == [
                "invalid_registry", "invalid_identity", "invalid_client_ca", "log_not_writable", "cannot_listen",
                "invalid_ca", "invalid_mint_request", "invalid_token_key",
            ]
        )
        let error = LocalGatewayError.logNotWritable(path: "log.jsonl", "The log cannot be created.")
        #expect(error.code == .logNotWritable)
        #expect(error.reported.code == "log_not_writable")
        #expect(error.reported.message == "log.jsonl: The log cannot be created.")
    }
}
