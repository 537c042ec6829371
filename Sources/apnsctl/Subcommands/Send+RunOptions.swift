import ArgumentParser
import Foundation
import PushBulk
import PushCore

/// `send`'s options as a bulk run records them in its header and as the printed resume command
/// gives them back, derived from the options' own declarations: the argument parser's
/// description of `send` names each option (in declaration order, with its default), and the
/// parsed command holds its value. Every option is recorded as given (a default left out) and
/// printed back as `--name value` once per value (`--name` for a flag), unless ``recording``
/// says otherwise. Adding an option to `send` is its declaration (and a line of its test);
/// ``recording`` changes only for an option a resume must not repeat as given.
extension Send {
    /// How an option is recorded for a resume, when not as given.
    enum Recording {
        /// Not recorded: it does not describe the run, or the resume gives it itself.
        case notRecorded
        /// Given back from what the run recorded itself: the header's notification values, as
        /// sent (a relative expiration as the time it meant), its token input, connections and
        /// shard (`auto/N` as the K it found).
        case fromRecord(@Sendable (BulkRunContinuation) -> String?)
        /// The environment the run used, given or chosen from the credential, so that another
        /// credential after a credential stop goes to the same gateway.
        case environmentUsed
        /// Recorded without the password its value may hold (a proxy URL's).
        case withoutPassword
    }

    static let recording: [String: Recording] = [
        "token": .notRecorded, "channel": .notRecorded, "apns-id": .notRecorded, "results": .notRecorded,
        "resume": .notRecorded, "resend-uncertain": .notRecorded, "no-resend-uncertain": .notRecorded,
        "resume-without-journal": .notRecorded,
        "topic": .fromRecord { $0.header.topic }, "push-type": .fromRecord { $0.header.pushType },
        "priority": .fromRecord { $0.header.priority.map { String($0) } },
        "expiration": .fromRecord { $0.header.expiration.map { String($0) } },
        "collapse-id": .fromRecord { $0.header.collapseID }, "tokens": .fromRecord { $0.parameters.tokens },
        "connections": .fromRecord { $0.parameters.connections.flatMap { $0 == 1 ? nil : String($0) } },
        "shard": .fromRecord { $0.header.shard?.description },
        "environment": .environmentUsed, "proxy": .withoutPassword,
    ]

    /// The options as the run records them: the credential and every option as given, the
    /// environment used, and what standard input feeds.
    func recordedParameters(environment: PushEnvironment) -> BulkRunParameters {
        var options: [String: [String]] = [:]
        for (argument, given) in zip(Self.declaredArguments, Self.values(of: self)) {
            guard let name = argument.long else { continue }
            var values = given == argument.defaultValue.map { [$0] } ? nil : given
            switch Self.recording[name] {
            case .notRecorded?, .fromRecord?: values = nil
            case .environmentUsed?: values = [environment.rawValue]
            case .withoutPassword?: values = values?.map(Self.withoutPassword)
            case nil: break
            }
            options[name] = values
        }
        let input: BulkRunParameters.StandardInputUse? =
            tokens == "-" ? .tokens : payload == "-" ? .payload : nil
        return BulkRunParameters(credential: credential, options: options, standardInput: input)
    }

    /// The arguments (after the program's name) that continue a run: its credential, its
    /// recorded options in `send`'s order, the header's notification values, and `--resume`
    /// with the results file. Exact words, to be quoted for a shell and never split again.
    static func resumeArguments(_ continuation: BulkRunContinuation) -> [String] {
        let parameters = continuation.parameters
        // A credential path that starts with "-" would read as an option.
        let credential = parameters.credential.hasPrefix("-") ? "./" + parameters.credential : parameters.credential
        var words = ["send", credential]
        var recorded = parameters.options
        for name in declaredArguments.compactMap(\.long) {
            if case .fromRecord(let value)? = recording[name] {
                recorded[name] = value(continuation).map { [$0] }
            }
            guard let values = recorded.removeValue(forKey: name) else { continue }
            words += values.isEmpty ? ["--" + name] : values.flatMap { option("--" + name, $0) }
        }
        // An option this version does not declare (recorded by another): given back as it was.
        for (name, values) in recorded.sorted(by: { $0.key < $1.key }) {
            words += values.isEmpty ? ["--" + name] : values.flatMap { option("--" + name, $0) }
        }
        return words + option("--resume", continuation.resultsPath)
    }

    /// `--name value`, or `--name=value` when the value starts with `-` and would otherwise
    /// read as an option.
    static func option(_ name: String, _ value: String) -> [String] {
        value.hasPrefix("-") && value != "-" ? [name + "=" + value] : [name, value]
    }

    /// A proxy URL without its password: `http://user:secret@host:3128` is recorded as
    /// `http://user@host:3128`.
    static func withoutPassword(_ proxy: String) -> String {
        guard var parts = URLComponents(string: proxy), parts.password != nil else { return proxy }
        parts.password = nil
        return parts.string ?? proxy
    }

    /// One argument of `send` as the argument parser describes it (`_dumpHelp`).
    struct DeclaredArgument: Decodable {
        struct Name: Decodable {
            var kind: String
            var name: String
        }
        var kind: String
        var names: [Name]?
        var defaultValue: String?

        /// The long name, without its dashes; nil for the credential (a positional argument).
        var long: String? { kind == "positional" ? nil : names?.first { $0.kind == "long" }?.name }
    }

    private struct Description: Decodable {
        struct Command: Decodable { var arguments: [DeclaredArgument] }
        var command: Command
    }

    /// `send`'s arguments in declaration order, as the argument parser describes them: the
    /// same order as ``values(of:)`` walks them.
    static let declaredArguments: [DeclaredArgument] = {
        let description = try? JSONDecoder().decode(Description.self, from: Data(Send._dumpHelp().utf8))
        return description?.command.arguments ?? []
    }()

    /// The parsed values of `value`'s arguments in declaration order, option groups walked in
    /// place (as the argument parser reads them): each as the words that give it (none for a
    /// flag that is set), nil when not given.
    static func values(of value: Any) -> [[String]?] {
        var found: [[String]?] = []
        for child in Mirror(reflecting: value).children {
            if let group = child.value as? any ParsedGroup {
                found += values(of: group.parsedGroup)
            } else if let argument = child.value as? any ParsedArgument {
                found.append(argument.givenWords)
            }
        }
        return found
    }
}

/// An option or argument of a parsed command, as the words that give its value again.
protocol ParsedArgument {
    /// Each value as the argument parser prints it; nil when absent (or an empty list).
    var givenWords: [String]? { get }
}

/// A group of options of a parsed command.
protocol ParsedGroup {
    var parsedGroup: Any { get }
}

extension Option: ParsedArgument {
    var givenWords: [String]? { argumentWords(of: wrappedValue) }
}

extension Argument: ParsedArgument {
    var givenWords: [String]? { argumentWords(of: wrappedValue) }
}

extension Flag: ParsedArgument {
    var givenWords: [String]? { wrappedValue as? Bool == true ? [] : nil }
}

extension OptionGroup: ParsedGroup {
    var parsedGroup: Any { wrappedValue }
}

/// A parsed value as the argument parser prints it (its `defaultValueDescription`, as help
/// shows a default): a list value by value; nil for an absent optional or an empty list.
private func argumentWords(of value: Any) -> [String]? {
    if let list = value as? [any ExpressibleByArgument] {
        return list.isEmpty ? nil : list.map(\.defaultValueDescription)
    }
    return (value as? any ExpressibleByArgument).map { [$0.defaultValueDescription] }
}
