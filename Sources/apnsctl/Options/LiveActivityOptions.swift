import ArgumentParser
import CredentialFormats
import Foundation
import PushGateway
import PushStore

/// A Live Activity payload from options, so nobody writes its JSON by hand.
struct LiveActivityOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "A Live Activity push: start (push-to-start), update or end. Builds the payload, with the timestamp of now.",
            valueName: "start|update|end"
        )
    )
    var event: LiveActivity.Event?

    @Option(
        help: ArgumentHelp(
            "With --event: the activity's content state, a JSON object inline or in a file (- for standard input).",
            valueName: "FILE|JSON"
        )
    )
    var contentState: String?

    @Option(
        help: ArgumentHelp("With --event start: the Swift type name of the activity's attributes.", valueName: "NAME")
    )
    var attributesType: String?

    @Option(
        help: ArgumentHelp(
            "With --event start: the attributes, a JSON object inline or in a file (- for standard input).",
            valueName: "FILE|JSON"
        )
    )
    var attributes: String?

    @Option(
        help: ArgumentHelp(
            "With --event: when the content goes stale (30m, 2h, an RFC 3339 date or UNIX seconds).",
            valueName: "TIME"
        )
    )
    var staleDate: String?

    @Option(
        help: ArgumentHelp(
            "With --event end: when the ended activity leaves the Lock Screen (a past time: at once).",
            valueName: "TIME"
        )
    )
    var dismissalDate: String?

    @Option(
        help: ArgumentHelp("With --event: which of the app's activities the system shows first.", valueName: "NUMBER")
    )
    var relevanceScore: Double?

    @Flag(help: "With --event start: ask the new activity for an update token (iOS 18).")
    var inputPushToken = false

    @Option(
        help: ArgumentHelp("With --event start: subscribe the new activity to this channel (iOS 18).", valueName: "ID")
    )
    var inputPushChannel: String?

    /// The options that only mean something with --event, by name.
    var given: [String] {
        [
            contentState.map { _ in "--content-state" }, attributesType.map { _ in "--attributes-type" },
            attributes.map { _ in "--attributes" }, staleDate.map { _ in "--stale-date" },
            dismissalDate.map { _ in "--dismissal-date" }, relevanceScore.map { _ in "--relevance-score" },
            inputPushToken ? "--input-push-token" : nil, inputPushChannel.map { _ in "--input-push-channel" },
        ].compactMap { $0 }
    }

    /// How many of these options read standard input.
    var standardInputReaders: Int { [contentState, attributes].filter { $0 == "-" }.count }

    func validate() throws {
        guard event != nil else {
            if let first = given.first { throw ValidationError("\(first) goes with --event start|update|end.") }
            return
        }
        // Which event takes which option is ActivityKit's rule, checked by the library through
        // Send's request shape (NotificationRequest.rules), worded there with these options' names.
        if let relevanceScore, !relevanceScore.isFinite {
            throw ValidationError("--relevance-score takes a number such as 50.")
        }
        if let inputPushChannel { _ = try usage { try ChannelID(inputPushChannel) } }
        let now = Date()
        if let staleDate {
            _ = try usage { try PushTime.date(staleDate, now: now, what: "stale date", allowPast: false) }
        }
        if let dismissalDate {
            _ = try usage { try PushTime.date(dismissalDate, now: now, what: "dismissal date", allowPast: true) }
        }
    }

    /// The Live Activity's parts, with `alert` (title and body) and `sound` from the alert options.
    func content(alert: String?, title: String?, sound: String?, now: Date = Date()) throws -> LiveActivity.Content? {
        guard let event else { return nil }
        var content = LiveActivity.Content(event: event, timestamp: now)
        content.contentState = try contentState.map { try InlineOrFile.read($0, option: "--content-state") }
        content.attributesType = attributesType
        content.attributes = try attributes.map { try InlineOrFile.read($0, option: "--attributes") }
        content.staleDate = try staleDate.map { try PushTime.date($0, now: now, what: "stale date", allowPast: false) }
        content.dismissalDate = try dismissalDate.map {
            try PushTime.date($0, now: now, what: "dismissal date", allowPast: true)
        }
        content.relevanceScore = relevanceScore
        content.alertBody = alert
        content.alertTitle = title
        content.sound = sound
        content.inputPushToken = inputPushToken
        content.inputPushChannel = inputPushChannel
        return content
    }

    /// The keys the payload will carry, from which options are given (nothing is read).
    func presentKeys(alert: String?, title: String?) -> Set<LiveActivity.Key> {
        var keys: Set<LiveActivity.Key> = []
        if contentState != nil { keys.insert(.contentState) }
        if attributesType != nil { keys.insert(.attributesType) }
        if attributes != nil { keys.insert(.attributes) }
        if alert != nil || title != nil { keys.insert(.alert) }
        if dismissalDate != nil { keys.insert(.dismissalDate) }
        if inputPushToken { keys.insert(.inputPushToken) }
        if inputPushChannel != nil { keys.insert(.inputPushChannel) }
        return keys
    }

    /// The option that gives a key of the payload.
    static func option(for key: LiveActivity.Key) -> String {
        key == .alert ? "--alert" : "--\(key.rawValue)"
    }
}

/// A PushCoreError from parsing an option, as a usage error (exit 64) with its hint.
func usage<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as PushCoreError {
        throw ValidationError(error.message + (error.hint.map { " " + $0 } ?? ""))
    }
}

/// An option's value that is either JSON written inline or the name of a file holding it; `-`
/// reads standard input. Files are read as every other option reads them, FIFOs and
/// /dev/stdin included.
enum InlineOrFile {
    static func read(_ value: String, option: String) throws -> String {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("{") || trimmed.hasPrefix("[") { return value }
        let bytes: [UInt8]
        if value == "-" {
            bytes = try InputFile.read(path: value, kind: .payload)
        } else {
            bytes = try CredentialFile.readBytes(path: value, kind: .payload)
        }
        guard let text = String(bytes: bytes, encoding: .utf8) else {
            throw PushCoreError(
                .invalidLiveActivity,
                "\(option) \(value): the file is not UTF-8 text.",
                hint: "Give a JSON object, inline or in a UTF-8 file."
            )
        }
        return text
    }
}
