import CredentialFormats
import Foundation
import PushChecks
import PushGateway
import PushStore
import PushTeam

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
        /// The topic being deployed to, when one was given.
        var topic: String? = nil
        /// What a stored token key is recorded to be for.
        var topics: [String] = []
        var environments: [PushEnvironment] = []
    }

    static func hint(for finding: Finding, about subject: Subject) -> String? {
        switch finding.code {
        case .environmentUnknown:
            let handshake = { (environment: PushEnvironment) in
                ErrorHints.command("handshake", subject.name, "--auth-check", "--environment", environment.rawValue)
            }
            if let environment = subject.environment { return "Confirm with `\(handshake(environment))`." }
            return "Try it against both: `\(handshake(.sandbox))`, then the same with --environment production."
        case .tokenMetadataIncomplete where subject.stored:
            return updateHint(for: subject)
        case .tokenMetadataIncomplete:
            return
                "Give the team with --team-id TEAMID (Apple Developer portal > Membership details), and the key ID with --key-id KEYID unless the file is named AuthKey_KEYID.p8."
        case .topicNotCovered where subject.stored && subject.kind == .tokenKey:
            guard let topic = subject.topic else { return finding.hint }
            let topics = (subject.topics + [TopicScope.app(of: topic)]).flatMap { ["--topic", $0] }
            return
                "A token key can push to every app of its team unless Apple restricted it to topics; if this one may push to \(topic), record it: `\(ErrorHints.command(["update", subject.name] + topics))`."
        case .environmentMismatch where subject.stored && subject.kind == .tokenKey:
            guard let environment = subject.environment else { return finding.hint }
            return (finding.hint ?? "")
                + " If Apple did not restrict this key, record that it serves both: `\(ErrorHints.command("update", subject.name, "--environment", "both"))`; for \(environment) only: the same with --environment \(environment.rawValue)."
        case .secretUnverified:
            var arguments = ["check", subject.name, "--skip-secrets"]
            if let environment = subject.environment { arguments += ["--environment", environment.rawValue] }
            if let topic = subject.topic { arguments += ["--topic", topic] }
            // A team store's secret is not in the Secret Service: its remedy is an identity.
            let remedy =
                finding.cause != .notAMember || finding.hint == nil
                ? "Run where the Secret Service is unlocked to verify the key"
                : (finding.hint ?? "").trimmingCharacters(in: CharacterSet(charactersIn: ". "))
            return "\(remedy); or check what the stored files say without it: `\(ErrorHints.command(arguments))`."
        case .expiring where subject.stored:
            return
                "Create a new certificate in the Apple Developer portal now and import it with --replace \(ErrorHints.shellQuoted(subject.name))."
        case .expiring:
            return "Create a new certificate in the Apple Developer portal now."
        default:
            return finding.hint
        }
    }

    /// `apnsctl update ALIAS --topic … --environment …` with what is recorded, else what this
    /// check was asked about; in words where neither says.
    static func updateHint(for subject: Subject) -> String {
        let topics = subject.topics.isEmpty ? subject.topic.map { [TopicScope.app(of: $0)] } ?? [] : subject.topics
        let environments = subject.environments.isEmpty ? subject.environment.map { [$0] } ?? [] : subject.environments
        guard !topics.isEmpty, !environments.isEmpty else {
            // What is not known is a quoted placeholder the command refuses if pasted unchanged;
            // the environment is one concrete choice, the others said in words.
            let topicWords = topics.isEmpty ? ["--topic", "<BUNDLE-ID>"] : topics.flatMap { ["--topic", $0] }
            let environment =
                environments.isEmpty
                ? "both" : Set(environments) == [.sandbox, .production] ? "both" : environments[0].rawValue
            let command = ErrorHints.command(
                ["update", subject.name] + topicWords + ["--environment", environment]
            )
            return
                "Record what it is for, with the app's bundle ID in place of the placeholder (one --topic per app): `\(command)`. If Apple restricted the key to one environment (its page under Certificates, Identifiers and Profiles, Keys, says), give --environment sandbox or --environment production instead of both."
        }
        let environment = Set(environments) == [.sandbox, .production] ? "both" : environments[0].rawValue
        let arguments =
            ["update", subject.name] + topics.flatMap { ["--topic", $0] } + ["--environment", environment]
        return "Record what it is for: `\(ErrorHints.command(arguments))`."
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
