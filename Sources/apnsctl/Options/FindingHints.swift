import Foundation
import PushCredentials
import PushGateway

/// The command line's wording of the findings' advice: the libraries say what to do in words;
/// here the findings whose remedy is a command of this tool name it, with the credential, so
/// that it works when pasted.
enum FindingHints {
    /// What a finding is about.
    struct Subject {
        /// The alias, or the file's path.
        var name: String
        var stored: Bool
        var kind: StoredCredential.Kind?
        /// The environment being deployed against, when one was given.
        var environment: PushEnvironment?
    }

    static func hint(for finding: Finding, about subject: Subject) -> String? {
        switch finding.code {
        case "environment_unknown":
            let handshake = { (environment: PushEnvironment) in
                ErrorHints.command("handshake", subject.name, "--auth-check", "--environment", environment.rawValue)
            }
            if let environment = subject.environment { return "Confirm with `\(handshake(environment))`." }
            return "Try it against both: `\(handshake(.sandbox))`, then the same with --environment production."
        case "token_metadata_incomplete" where subject.stored:
            return
                "Import the .p8 again with --replace \(ErrorHints.shellQuoted(subject.name)) --team-id TEAMID --topic BUNDLE --environment sandbox|production|both."
        case "topic_not_covered" where subject.stored && subject.kind == .tokenKey:
            return
                "A token key can push to every app of its team; if this app is one, import the .p8 again with --replace \(ErrorHints.shellQuoted(subject.name)) and a --topic for each app it is for."
        case "expiring" where subject.stored:
            return
                "Create a new certificate in the Apple Developer portal now and import it with --replace \(ErrorHints.shellQuoted(subject.name))."
        case "expiring":
            return "Create a new certificate in the Apple Developer portal now."
        default:
            return finding.hint
        }
    }

    static func forCommandLine(_ findings: [Finding], about subject: Subject) -> [Finding] {
        findings.map { finding in
            var finding = finding
            finding.hint = hint(for: finding, about: subject)
            return finding
        }
    }
}

extension FindingHints.Subject {
    init(_ credential: LoadedCredential, environment: PushEnvironment?) {
        self.init(name: credential.name, stored: credential.isStored, kind: credential.kind, environment: environment)
    }
}
