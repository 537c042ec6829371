import CredentialFormats
import Foundation
import PushChecks
import PushCore
import PushGateway
import Testing

/// Reports decide on the typed error behind their JSON `error`, never on its text.
struct TypedCauseTests {
    @Test func aCredentialNotFoundIsNotJudgedByItsCode() throws {
        var report = PreflightReport(credential: "prod")
        let error = CredentialError.aliasNotFound("prod", "No credential named prod.")
        report.error = error
        #expect(report.fitness == .couldNotCheck)
        #expect(report.error?.subject == .credential("prod"))

        var damaged = PreflightReport(credential: "prod")
        damaged.error = CredentialError(.corrupt, path: "prod.p12", "Damaged.")
        #expect(damaged.fitness == .unfit)
        // The JSON gives a credential's message without its path, which the report names.
        #expect(
            PreflightCheck.reported(try #require(damaged.error))
                == ReportedError(code: "corrupt", message: "Damaged.")
        )
        // An error no module has a code for is `failed`, in its words.
        #expect(
            PreflightCheck.reported(PreflightFailure(message: "It broke."))
                == ReportedError(code: "failed", message: "It broke.")
        )
    }

    @Test func aFailedCheckKeepsItsCauseWithItsSubject() throws {
        let error = CredentialError(.secretNotFound, "The secret of prod is missing.", alias: "prod")
        let result = CheckResult.failed(name: "prod", origin: "store", error: error)
        #expect(result.error?.code == .secretNotFound)
        #expect(result.error?.alias == "prod")
        // The JSON gives its code, message and hint.
        let data = try JSONEncoder().encode(result)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let reported = try #require(object["error"] as? [String: String])
        #expect(reported == ["code": "secret_not_found", "message": "The secret of prod is missing."])
    }
}
