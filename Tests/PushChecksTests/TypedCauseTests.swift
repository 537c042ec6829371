import CredentialFormats
import PushChecks
import PushCore
import PushGateway
import Testing

/// Reports decide on the typed error behind their JSON `error`, never on its text.
struct TypedCauseTests {
    @Test func aCredentialNotFoundIsNotJudgedByItsCode() {
        var report = PreflightReport(credential: "prod")
        let error = CredentialError.aliasNotFound("prod", "No credential named prod.")
        report.error = error.reported
        report.cause = error
        #expect(report.fitness == .couldNotCheck)
        #expect(report.cause?.subject == .credential("prod"))

        // The same JSON without the typed error behind it decides nothing: text is not state.
        var text = PreflightReport(credential: "prod")
        text.error = error.reported
        #expect(text.fitness == .unfit)

        var damaged = PreflightReport(credential: "prod")
        damaged.cause = CredentialError.corrupt(path: "prod.p12", "Damaged.")
        #expect(damaged.fitness == .unfit)
    }

    @Test func aFailedCheckKeepsItsCauseWithItsSubject() {
        let error = CredentialError.secretNotFound("The secret of prod is missing.", alias: "prod")
        let result = CheckResult.failed(name: "prod", origin: "store", error: error)
        #expect(result.cause?.code == .secretNotFound)
        #expect(result.cause?.alias == "prod")
        #expect(result.error == ReportedError(code: "secret_not_found", message: "The secret of prod is missing."))
    }
}
