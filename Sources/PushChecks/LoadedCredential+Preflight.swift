import CredentialFormats
import Foundation
import PushStore

extension LoadedCredential {
    /// Findings that predict a rejection, checked before connecting.
    public func preflightFindings(
        environment: PushEnvironment,
        topic: String?,
        warnDays: Int = 30,
        at date: Date = Date()
    ) -> [Finding] {
        let expectations = CheckExpectations(date: date, warnDays: warnDays, environment: environment, topic: topic)
        if let certificate {
            return CredentialCheck.certificate(
                certificate,
                name: name,
                origin: "file",
                keyVerified: true,
                expectations: expectations
            ).findings
        }
        // A token key records no dates; what it was imported for is all there is to check.
        return CredentialCheck.tokenKeyScopeFindings(
            environments: environments,
            topics: topics,
            environment: environment,
            topic: topic
        )
    }
}
