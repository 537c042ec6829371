import CredentialFormats
import Foundation
import LocalGateway
import PushBulk
import PushCore
import PushGateway
import PushMonitoring
import PushStore
import TestSupport
import Testing

/// Every module's error, as the module itself throws it, renders to the one JSON shape and
/// follows the one equality rule.
struct ErrorShapeTests {
    /// An error thrown by each module's own code, caught as the protocol.
    static func thrown(_ body: () throws -> Void) -> (any ReportableError)? {
        do {
            try body()
            return nil
        } catch {
            return error as? any ReportableError
        }
    }

    static func keys(_ error: any ReportableError) throws -> Set<String> {
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(error.reported))
        return Set(try #require(object as? [String: Any]).keys)
    }

    @Test func everyModulesErrorRendersToTheSameShape() throws {
        let folder = try TemporaryFolder()
        let registry = folder.path("registry.json")
        try Data("not json".utf8).write(to: URL(fileURLWithPath: registry))
        let missing = folder.path("missing.p12")
        let errors: [(any ReportableError)?] = [
            Self.thrown { _ = try DeviceToken("zz") },
            Self.thrown { _ = try InputFile.read(path: missing, kind: .credential) },
            Self.thrown { _ = try Endpoint.parse("gateway:notaport") },
            Self.thrown { _ = try LocalGateway.loadRegistry(path: registry) },
            BulkRunError.resultsExist(path: folder.path("sent.jsonl")),
            MonitoringError(
                .invalidProbeRequest,
                "Missing environment=sandbox|production: say which gateway to probe."
            ),
        ]
        let expected: [(ErrorCode, ErrorSubject?)] = [
            (.invalidDeviceToken, nil),
            (.fileNotFound, .file(missing)),
            (.invalidEndpoint, nil),
            (.invalidRegistry, .file(registry)),
            (.resultsExist, .file(folder.path("sent.jsonl"))),
            (.invalidProbeRequest, nil),
        ]
        for (error, (code, subject)) in zip(errors, expected) {
            let error = try #require(error, "\(code) was not thrown as a ReportableError")
            #expect(error.code == code)
            #expect(error.subject == subject)
            let reported = error.reported
            #expect(reported.code == code.rawValue)
            #expect(!reported.message.isEmpty)
            // A file's path leads the message, as standard error shows it.
            if case .file(let path) = subject {
                #expect(reported.message.hasPrefix(path + ": "), "\(reported.message)")
            }
            let keys = try Self.keys(error)
            #expect(
                keys.isSubset(of: ["code", "message", "hint"]) && keys.isSuperset(of: ["code", "message"]),
                "\(keys)"
            )
            #expect((reported.hint != nil) == keys.contains("hint"))
        }
    }

    @Test func gatewayErrorsAreEqualOnTheirCodeNotTheirWords() {
        // The same code about the same server, in other words: equal. Another server: another error.
        #expect(
            GatewayError.connectionRefused("127.0.0.1:1")
                == GatewayError(.connectionRefused, "Refused.", server: "127.0.0.1:1")
        )
        #expect(GatewayError.connectionRefused("127.0.0.1:1") != GatewayError.connectionRefused("[::1]:2"))
        #expect(GatewayError.connectionRefused("127.0.0.1:1") != GatewayError.notConnected())
        #expect(GatewayError(.clientCertificateRejected, "refused").failure == .problem)
        #expect(GatewayError(.unsupportedProxy, "socks5").failure == .invalidRequest)
        #expect(GatewayError.notConnected().failure == .couldNotCheck)
    }

    @Test func credentialErrorsAreEqualOnTheirCodeAndFile() {
        let damaged = CredentialError(.corrupt, path: "a.p12", "It is damaged.")
        #expect(damaged == CredentialError(.corrupt, path: "a.p12", "Other words.", hint: "Export it again."))
        #expect(damaged != CredentialError(.corrupt, path: "b.p12", "It is damaged."))
        #expect(damaged != CredentialError(.wrongPassword, path: "a.p12", "It is damaged."))
        // Without a file, the stored credential is the subject.
        let stored = CredentialError(.secretNotFound, path: nil, "No secret.", alias: "com.example.app")
        #expect(stored.subject == .credential("com.example.app"))
        #expect(stored.statement == "No secret.")
    }

    @Test func oneCodeNamesTheSameFailureInEveryModule() {
        // A team ID read by the APNs vocabulary and by a credential file is the same code.
        // Every module's error carries the one shared code, declared once.
        #expect(CredentialError(.invalidTeamID, "No.").code == PushCoreError(.invalidTeamID, "No.").code)
        #expect(CredentialError.Code.tooLarge == GatewayError.Code.fileTooLarge)
        #expect(LocalGatewayError(.cannotListen, path: nil, "taken").code.rawValue == "cannot_listen")
    }
}
