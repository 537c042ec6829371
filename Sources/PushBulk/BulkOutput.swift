import Foundation
import PushCore

/// Where a bulk run's results and journal go. Loop-confined, like the sender.
///
/// The journal holds `S <line> <token> <apns-id> <attempt>` for every send before it happens
/// and `C <line> <token>` when a send turned out not to be processed. Each flush ends with a
/// commit record `E <count> <checksum>` over the records before it: a group whose commit is
/// missing or wrong (a write cut by a full disk, a crash mid-write) was never followed by a
/// send, and a resumed run ignores it. A token with an `S`, neither a result nor a later `C`
/// was in flight when the run stopped.
public final class BulkOutput: @unchecked Sendable {
    public let results: AppendFile
    public let journal: AppendFile?
    /// Lines journaled as sent and not yet settled, with their token (for `C` records).
    private var openLines: [Int: String] = [:]
    private var groupCount = 0
    private var groupHash = BulkJournal.hashSeed

    /// `journal` nil: no crash protection (results on standard output).
    public init(results: AppendFile, journal: AppendFile?) {
        self.results = results
        self.journal = journal
    }

    public func record(_ result: BulkResult) {
        results.append { result.appendJSONLine(to: &$0) }
        openLines[result.line] = nil
    }

    public func journalSend(line: Int, token: String, apnsID: String, attempt: Int) {
        guard journal != nil else { return }
        openLines[line] = token
        journalRecord(UInt8(ascii: "S"), line: line, token: token, send: (apnsID, attempt))
    }

    public func journalClear(line: Int) {
        guard journal != nil, let token = openLines.removeValue(forKey: line) else { return }
        journalRecord(UInt8(ascii: "C"), line: line, token: token, send: nil)
    }

    /// Appends one record (`S line token apns-id attempt` or `C line token`), written straight
    /// into the journal's buffer, to the group that the next ``flushJournal()`` commits.
    private func journalRecord(_ letter: UInt8, line: Int, token: String, send: (apnsID: String, attempt: Int)?) {
        guard let journal else { return }
        groupCount += 1
        var hash = groupHash
        journal.append(flushingWhenFull: false) { bytes in
            let start = bytes.count
            bytes.append(contentsOf: [letter, UInt8(ascii: " ")])
            TextEncoding.appendDecimal(line, to: &bytes)
            bytes.append(UInt8(ascii: " "))
            bytes.append(contentsOf: token.utf8)
            if let send {
                bytes.append(UInt8(ascii: " "))
                bytes.append(contentsOf: send.apnsID.utf8)
                bytes.append(UInt8(ascii: " "))
                TextEncoding.appendDecimal(send.attempt, to: &bytes)
            }
            bytes.append(UInt8(ascii: "\n"))
            hash = BulkJournal.hash(bytes[start...], from: hash)
        }
        groupHash = hash
    }

    /// Commits the records written since the last flush and hands them to the kernel.
    public func flushJournal() {
        guard let journal, groupCount > 0 else { return }
        journal.append(bytes: BulkJournal.commitRecord(count: groupCount, hash: groupHash).utf8)
        groupCount = 0
        groupHash = BulkJournal.hashSeed
        journal.flush()
    }

    public func flushResults() { results.flush() }

    public var resultsFailure: String? { results.failure }
    public var journalFailure: String? { journal?.failure }
    public var failure: String? { results.failure ?? journal?.failure }
    /// What to do about ``failure``.
    public var failureRemedy: String {
        AppendFile.remedy(for: results.failure != nil ? results.failureCause : journal?.failureCause)
    }

    /// Flushes and closes both. Deleting the journal is the run's decision (``BulkRun``).
    public func close() {
        flushJournal()
        results.close()
        journal?.close()
    }
}

/// The journal's record layout, written by ``BulkOutput`` and read by ``ResumeState``.
enum BulkJournal {
    static let hashSeed: UInt32 = 2_166_136_261

    /// FNV-1a, continued from `from`.
    static func hash(_ bytes: some Sequence<UInt8>, from seed: UInt32) -> UInt32 {
        var value = seed
        for byte in bytes { value = (value ^ UInt32(byte)) &* 16_777_619 }
        return value
    }

    static func commitRecord(count: Int, hash: UInt32) -> String {
        "E \(count) \(String(hash, radix: 16))\n"
    }

    struct Entry {
        var send: Bool
        var line: Int
        var token: String
        var apnsID: UUID?
        var attempt: Int
    }

    /// The committed entries of a journal, and the byte length up to its last commit.
    static func read(_ bytes: some Collection<UInt8>) -> (entries: [Entry], validLength: Int) {
        var committed: [Entry] = []
        var group: [Entry] = []
        var groupHash = hashSeed
        var validLength = 0
        var offset = 0
        var torn = false
        let all = Array(bytes)
        var start = 0
        while start < all.count, !torn {
            guard let newline = all[start...].firstIndex(of: UInt8(ascii: "\n")) else { break }
            let record = all[start...newline]
            let fields = String(decoding: all[start..<newline], as: UTF8.self).split(separator: " ")
            start = newline + 1
            offset = start
            switch fields.first {
            case "E":
                guard fields.count == 3, Int(fields[1]) == group.count,
                    String(groupHash, radix: 16) == fields[2]
                else {
                    torn = true
                    continue
                }
                committed += group
                group = []
                groupHash = hashSeed
                validLength = offset
            case "S" where fields.count == 5:
                guard let line = Int(fields[1]), let attempt = Int(fields[4]),
                    let id = UUID(uuidString: String(fields[3]))
                else {
                    torn = true
                    continue
                }
                group.append(Entry(send: true, line: line, token: String(fields[2]), apnsID: id, attempt: attempt))
                groupHash = hash(record, from: groupHash)
            case "C" where fields.count == 3:
                guard let line = Int(fields[1]) else {
                    torn = true
                    continue
                }
                group.append(Entry(send: false, line: line, token: String(fields[2]), apnsID: nil, attempt: 0))
                groupHash = hash(record, from: groupHash)
            default:
                torn = true
            }
        }
        return (committed, validLength)
    }
}
