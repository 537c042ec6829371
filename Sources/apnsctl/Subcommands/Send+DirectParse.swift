import ArgumentParser

/// `send`'s command line read without swift-argument-parser's reflection.
///
/// The argument parser learns a command's options by reflecting on a value of it: every
/// property wrapper of `send` and its option groups is asked, through the Swift runtime, which
/// protocols it conforms to, and each new question scans all of the program's conformance
/// records. On a cold `send` that was the largest part of the parse, itself the longest step on
/// the main thread (docs/performance.md, "Who asks the conformance questions").
///
/// This reader takes the plain forms, `send CREDENTIAL` with `--name VALUE`, `--name=VALUE`,
/// flags, `-4` and `-6`, and builds the same `Send` the argument parser would, then runs the
/// same validations. Anything else (an option it does not know, a short option, `--`, a value
/// that starts with `-`, an option given twice that is not repeatable, a value that does not
/// convert, a validation that fails, help) returns nil, and the argument parser reads the line
/// as before, with its own messages and exit statuses. Every option of `send` must be in the
/// tables below: a test compares them with the argument parser's own list, and compares the two
/// parsers' results over a corpus of command lines.
extension Send {
    /// Options that take a value, by long name.
    static let directValueOptions: Set<String> = [
        "token", "channel", "tokens", "results", "resume", "connections", "max-attempts", "alert", "title", "sound",
        "badge", "payload", "push-type", "priority", "expiration", "collapse-id", "apns-id", "topic", "environment",
        // Live Activities
        "event", "content-state", "attributes-type", "attributes", "stale-date", "dismissal-date", "relevance-score",
        "input-push-channel",
        // The connection
        "port", "gateway", "ca", "ca-bundle", "resolve", "proxy", "timeout",
        // The credential
        "store", "identity", "password-env", "password-file", "team-id", "key-id",
    ]

    /// Options that may be given more than once, each value kept.
    static let directRepeatableOptions: Set<String> = ["ca", "resolve"]

    /// Flags, by long name; `-4` and `-6` are `ipv4` and `ipv6`.
    static let directFlags: Set<String> = [
        "resend-uncertain", "resume-without-journal", "allow-duplicates", "quiet", "background", "json",
        "input-push-token", "ipv4", "ipv6",
        "password-stdin",
    ]

    /// `arguments` (what follows `send`) as the argument parser would read them, or nil when the
    /// line is not one of the plain forms or does not validate. Throws only what the store
    /// option's own check throws after reporting it (a folder that is not a store), as the
    /// argument parser would.
    static func parseDirectly(_ arguments: [String]) throws -> Send? {
        guard let line = DirectLine(arguments) else { return nil }
        do {
            return try line.send()
        } catch is DirectLine.NotPlain {
            return nil
        }
    }
}

/// A `send` command line split into its options, flags and one positional argument.
private struct DirectLine {
    var values: [String: [String]] = [:]
    var flags: Set<String> = []
    var credential: String

    /// Why a line is left to the argument parser; never shown.
    struct NotPlain: Error {}

    init?(_ arguments: [String]) {
        var positional: [String] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            if argument == "-4" || argument == "-6" {
                guard flags.insert(argument == "-4" ? "ipv4" : "ipv6").inserted else { return nil }
                continue
            }
            guard argument.hasPrefix("--") else {
                // A short option, a lone `-`, or the credential.
                if argument.hasPrefix("-") { return nil }
                positional.append(argument)
                continue
            }
            var name = String(argument.dropFirst(2))
            var inline: String?
            if let equals = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if Send.directFlags.contains(name) {
                guard inline == nil, flags.insert(name).inserted else { return nil }
                continue
            }
            guard Send.directValueOptions.contains(name) else { return nil }
            let value: String
            if let inline {
                value = inline
            } else {
                guard index < arguments.endIndex else { return nil }
                value = arguments[index]
                index += 1
            }
            guard !value.isEmpty, !value.hasPrefix("-") else { return nil }
            if values[name] != nil, !Send.directRepeatableOptions.contains(name) { return nil }
            values[name, default: []].append(value)
        }
        guard positional.count == 1, let credential = positional.first else { return nil }
        self.credential = credential
    }

    func string(_ name: String) -> String? { values[name]?.last }
    func strings(_ name: String) -> [String] { values[name] ?? [] }
    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The value of `name` converted as the argument parser converts it.
    func value<T: ExpressibleByArgument>(_ name: String) throws -> T? {
        guard let text = string(name) else { return nil }
        guard let value = T(argument: text) else { throw NotPlain() }
        return value
    }

    /// The command, with every property set (the argument parser leaves none unset) and every
    /// validation run that the argument parser runs. A refusal is left to the argument parser,
    /// which words it: the validations that only throw come first, and the store option's,
    /// which reports a folder that is not a store before it throws, comes last, so that it
    /// runs once: its refusals in words are left to the argument parser too, and its report
    /// is thrown on.
    func send() throws -> Send {
        var liveActivity = LiveActivityOptions()
        liveActivity.event = try value("event")
        liveActivity.contentState = string("content-state")
        liveActivity.attributesType = string("attributes-type")
        liveActivity.attributes = string("attributes")
        liveActivity.staleDate = string("stale-date")
        liveActivity.dismissalDate = string("dismissal-date")
        liveActivity.relevanceScore = try value("relevance-score")
        liveActivity.inputPushToken = flag("input-push-token")
        liveActivity.inputPushChannel = string("input-push-channel")

        var connection = ConnectionOptions()
        connection.port = try value("port")
        connection.gateway = string("gateway")
        connection.ca = strings("ca")
        connection.caBundle = string("ca-bundle")
        connection.ipv4 = flag("ipv4")
        connection.ipv6 = flag("ipv6")
        connection.resolve = strings("resolve")
        connection.proxy = string("proxy")
        connection.timeout = try value("timeout") ?? 10

        var store = StoreOptions()
        store.store = string("store")
        store.identity = string("identity")
        var password = PasswordOptions()
        password.passwordStdin = flag("password-stdin")
        password.passwordEnv = string("password-env")
        password.passwordFile = string("password-file")
        var credentials = CredentialOptions()
        credentials.store = store
        credentials.password = password
        credentials.teamID = string("team-id")
        credentials.keyID = string("key-id")

        var send = Send()
        send.credential = credential
        send.token = string("token")
        send.channel = string("channel")
        send.tokens = string("tokens")
        send.results = string("results")
        send.resume = string("resume")
        send.resendUncertain = flag("resend-uncertain")
        send.resumeWithoutJournal = flag("resume-without-journal")
        send.allowDuplicates = flag("allow-duplicates")
        send.connections = try value("connections") ?? 1
        send.maxAttempts = try value("max-attempts") ?? 5
        send.quiet = flag("quiet")
        send.alert = string("alert")
        send.title = string("title")
        send.sound = string("sound")
        send.badge = try value("badge")
        send.background = flag("background")
        send.payload = string("payload")
        send.pushType = string("push-type")
        send.priority = try value("priority")
        send.expiration = string("expiration")
        send.collapseID = string("collapse-id")
        send.apnsID = string("apns-id")
        send.topic = string("topic")
        send.json = flag("json")
        send.environment = try value("environment")
        send.liveActivity = liveActivity
        send.connection = connection
        send.credentials = credentials
        do {
            try liveActivity.validate()
            try connection.validate()
            try password.validate()
            try send.validate()
        } catch {
            throw NotPlain()
        }
        do {
            try store.validate()
        } catch is ValidationError {
            throw NotPlain()
        }
        return send
    }
}
