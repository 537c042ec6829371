import CredentialFormats
import Foundation
import LocalGateway
import PushCore
import PushGateway
import Testing

/// Every module's error carries PushCore's one ``ErrorCode``, each code declared once with the
/// string JSON reports give: the typed comparison, the shared one and the JSON string agree.
struct SharedCodeTests {
    @Test func aCredentialErrorsCodeIsItsJSONString() throws {
        let error = CredentialError(.wrongPassword, path: "a.p12", "Wrong password.")
        #expect(error.code == .wrongPassword)
        #expect(error.code != .corrupt)
        #expect((error as any ReportableError).code == ErrorCode("wrong_password"))
        #expect(error.reported.code == "wrong_password")
        #expect(String(describing: error.code) == "wrong_password")
        #expect(CredentialError.Code.tooLarge == .fileTooLarge)
        #expect(CredentialError(.fileTooLarge, path: "a.p12", "Too large.").reported.code == "file_too_large")
        #expect(CredentialError(.keyMismatch, path: "a.p12", "No.").reported.code == "key_mismatch")
    }

    @Test func aCodeDecidesWhetherARefusalIsAProblem() {
        // A refusal is a problem found (exit 1); a file that cannot be read could not be checked.
        #expect(CredentialError(.outsideValidity, path: "a.pem", "Expired.").failure == .problem)
        #expect(CredentialError(.fileExists, path: "a.pem", "Exists.").failure == .problem)
        #expect(CredentialError(.corrupt, path: "a.pem", "Damaged.").failure == .couldNotCheck)
    }

    @Test func aGatewayErrorsCodeIsItsJSONString() throws {
        let error = GatewayError.connectionRefused("127.0.0.1:1")
        #expect(error.code == .connectionRefused)
        #expect(error.reported.code == "connection_refused")
        #expect(error.code != .wrongPassword)
    }

    @Test func aPushCoreErrorsCodeIsItsJSONString() throws {
        let error = PushCoreError(.invalidTime, "It has passed.")
        #expect(error.code == .invalidTime)
        #expect(error.failure == .invalidRequest)
        #expect(error.reported.code == "invalid_time")
        #expect(PushCoreError(.invalidDeviceToken, "No.").reported.code == "invalid_device_token")
    }

    @Test func aLocalGatewayErrorsCodeIsItsJSONString() throws {
        let error = LocalGatewayError(.logNotWritable, path: "log.jsonl", "The log cannot be created.")
        #expect(error.code == .logNotWritable)
        #expect(error.reported.code == "log_not_writable")
        #expect(error.reported.message == "log.jsonl: The log cannot be created.")
    }
}
