import Crypto
import Foundation
import PushCore

/// The first line of a bulk run's results file: what was sent, to where, as whom. A resume
/// compares it with the run it is asked to continue, so that one announcement never goes out
/// with two texts, two credentials or to two gateways.
public struct BulkRunHeader: Codable, Equatable, Sendable {
    /// The version of this header's layout: 2 adds ``parameters``, 3 ``tokensFingerprint``, 4
    /// records the parameters' options by name, 5 ``resendUncertain``,
    /// ``collapseIDFromAPNsID`` and ``shard``; an older header is read as before (its parameters in the same
    /// form) and a resume still accepts it.
    public var version = 5
    /// `sha256:` and the hex SHA-256 of the certificate's DER, or of a token key's public key.
    public var credential: String
    public var topic: String?
    public var pushType: String
    public var priority: Int?
    public var expiration: Int?
    public var collapseID: String?
    /// Hex SHA-256 of the payload's bytes.
    public var payloadSHA256: String
    /// `host:port` of the gateway.
    public var gateway: String
    /// The options the run was started with, for what continues it (kept under the key
    /// `command`); nil in a version-1 header and for a run a program
    /// started without them. A resume does not compare them: the same run may be continued with
    /// its files moved or its options given otherwise.
    public var parameters: BulkRunParameters?
    /// The token file the run reads, when it is a regular file: its size and the SHA-256 of its
    /// first and last 64 KiB (``fingerprint(ofTokenFile:)``). A resume may read another file
    /// (results are matched by token, so a file with lines moved or tokens added works), but it
    /// is told so: the first file's tokens that are not in the new one would never be sent
    /// (``BulkRun/tokenFileChanged``). Nil for standard input and in older headers.
    public var tokensFingerprint: String?
    /// The run's policy for a notification whose answer was lost (a timeout, a reset, a
    /// connection lost in flight, a run killed with it in flight): true, sent again with the
    /// same `apns-id` (and collapse ID); false, at most once: never sent again, its result
    /// `uncertain`. A resume keeps it unless told otherwise. Nil in a header written before
    /// version 5: that run's sends carried no collapse ID of their own, so its resume sends
    /// nothing of it again unless told to.
    public var resendUncertain: Bool?
    /// True when each notification carries a collapse ID derived from its `apns-id`
    /// (``BulkDelivery/collapseID(apnsID:)``); nil before version 5.
    public var collapseIDFromAPNsID: Bool?
    /// The shard of the token file this run sends (`send --shard K/N`, recorded as
    /// `"shard":{"k":K,"n":N}`); nil for a whole run. A resume of another shard is refused.
    public var shard: RunShard?

    public init(
        credential: String,
        template: NotificationTemplate,
        gateway: String,
        parameters: BulkRunParameters? = nil
    ) {
        self.credential = credential
        topic = template.topic
        pushType = template.pushType.rawValue
        priority = template.priority?.rawValue
        expiration = template.expiration.map { Int($0.timeIntervalSince1970) }
        collapseID = template.collapseID
        payloadSHA256 = SHA256.hash(data: template.payload).map { String(format: "%02x", $0) }.joined()
        self.gateway = gateway
        self.parameters = parameters
        collapseIDFromAPNsID = BulkDelivery.derivesCollapseID(for: template)
    }

    enum CodingKeys: String, CodingKey {
        case version, credential, topic, priority, expiration, gateway
        case parameters = "command"
        case tokensFingerprint = "tokens_fingerprint"
        case pushType = "push_type"
        case collapseID = "collapse_id"
        case payloadSHA256 = "payload_sha256"
        case resendUncertain = "resend_uncertain"
        case collapseIDFromAPNsID = "collapse_id_from_apns_id"
        case shard
    }

    private struct Line: Codable { var run: BulkRunHeader }

    /// `{"run":{...}}` and a newline.
    public var jsonLine: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding plain strings and numbers cannot fail.
        let data = (try? encoder.encode(Line(run: self))) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// The header in a results file's first line, or nil when the line is not one.
    public static func parse(_ line: some Collection<UInt8>) -> BulkRunHeader? {
        guard line.starts(with: Array(#"{"run":"#.utf8)) else { return nil }
        return try? JSONDecoder().decode(Line.self, from: Data(line)).run
    }

    /// A token file's fingerprint: `BYTES:` and the hex SHA-256 of its first and last 64 KiB
    /// (the whole file when smaller), read in constant time whatever its size. Nil for what is
    /// not a regular file (standard input, a pipe, a device) or cannot be read.
    public static func fingerprint(ofTokenFile path: String) -> String? {
        guard path != "-",
            let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            attributes[.type] as? FileAttributeType == .typeRegular,
            let size = (attributes[.size] as? NSNumber)?.uint64Value,
            let handle = FileHandle(forReadingAtPath: path)
        else { return nil }
        defer { try? handle.close() }
        let piece: UInt64 = 64 * 1024
        var hash = SHA256()
        guard let head = try? handle.read(upToCount: Int(piece)) else { return nil }
        hash.update(data: head)
        if size > piece {
            guard (try? handle.seek(toOffset: max(piece, size - piece))) != nil,
                let tail = try? handle.read(upToCount: Int(piece))
            else { return nil }
            hash.update(data: tail)
        }
        return "\(size):" + hash.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// A UNIX time as RFC 3339 in UTC, for people.
    static func utc(_ seconds: Int) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    /// What differs between the run recorded here and `other`, in words ("the payload",
    /// "the credential"...), empty when they are the same run.
    public func differences(from other: BulkRunHeader) -> [String] {
        var differences: [String] = []
        if credential != other.credential { differences.append("the credential") }
        if topic != other.topic {
            differences.append("the topic (\(topic ?? "none") then, \(other.topic ?? "none") now)")
        }
        if pushType != other.pushType { differences.append("the push type (\(pushType) then, \(other.pushType) now)") }
        if payloadSHA256 != other.payloadSHA256 { differences.append("the payload") }
        func said<T>(_ value: T?) -> String { value.map { "\($0)" } ?? "none" }
        if priority != other.priority {
            differences.append("the priority (\(said(priority)) then, \(said(other.priority)) now)")
        }
        if expiration != other.expiration {
            // UNIX seconds, as the apns-expiration header carries them; a relative expiration
            // (an hour from now) is a new time at every start, so the first run's is given back.
            let then = expiration.map { "\($0) (\(Self.utc($0)))" } ?? "none"
            let now = other.expiration.map { "\($0) (\(Self.utc($0)))" } ?? "none"
            differences.append("the expiration (\(then) then, \(now) now; give the first run's time as it was)")
        }
        if collapseID != other.collapseID {
            differences.append("the collapse ID (\(said(collapseID)) then, \(said(other.collapseID)) now)")
        }
        if gateway != other.gateway { differences.append("the gateway (\(gateway) then, \(other.gateway) now)") }
        if shard != other.shard {
            let whole = "the whole list"
            let then = shard.map { "shard \($0)" } ?? whole
            let now = other.shard.map { "shard \($0)" } ?? whole
            differences.append("the shard (\(then) then, \(now) now; resume each shard with its own --shard)")
        }
        return differences
    }
}

/// A line a run that stopped early appends to its results file: why it stopped, and with which
/// credential, so that a resume can tell a stop caused by the credential (which another
/// credential for the same app may continue) from any other.
public struct BulkStopRecord: Codable, Equatable, Sendable {
    public var cause: String
    /// APNs' reason, when an answer stopped the run.
    public var reason: String?
    /// The credential's fingerprint, as in the run header.
    public var credential: String

    public init(cause: String, reason: String?, credential: String) {
        self.cause = cause
        self.reason = reason
        self.credential = credential
    }

    private struct Line: Codable { var stop: BulkStopRecord }

    /// `{"stop":{...}}` and a newline.
    public var jsonLine: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(Line(stop: self))) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    public static func parse(_ line: some Collection<UInt8>) -> BulkStopRecord? {
        guard line.starts(with: Array(#"{"stop":"#.utf8)) else { return nil }
        return try? JSONDecoder().decode(Line.self, from: Data(line)).stop
    }
}

/// The last line of a run that gave every token a result: `{"end":{"credential":"sha256:…","results":N}}`.
/// A results file that ends without it (or with result lines after it) belongs to a run that did
/// not finish, whose journal says what was in flight: a resume without that journal is refused
/// unless the caller takes the risk of sending those again.
public struct BulkEndRecord: Codable, Equatable, Sendable {
    /// The credential's fingerprint, as in the run header.
    public var credential: String
    /// Result lines the file holds: this run's, and those of the runs it continued in place.
    public var results: Int

    public init(credential: String, results: Int) {
        self.credential = credential
        self.results = results
    }

    private struct Line: Codable { var end: BulkEndRecord }

    /// `{"end":{...}}` and a newline.
    public var jsonLine: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(Line(end: self))) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    public static func parse(_ line: some Collection<UInt8>) -> BulkEndRecord? {
        guard line.starts(with: Array(#"{"end":"#.utf8)) else { return nil }
        return try? JSONDecoder().decode(Line.self, from: Data(line)).end
    }
}
