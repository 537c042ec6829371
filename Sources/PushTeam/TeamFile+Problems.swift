import Foundation

extension TeamFile {
    /// What makes this list unusable as the version after `previous`, in words; empty when it is
    /// usable. The rules added later (ASCII names, no two names differing only by case,
    /// `ssh-ed25519` as the only ssh recipient) apply to the members this version adds or changes;
    /// a member `previous` holds as it stands is held to the rules it was taken under, so that a
    /// store whose signed lists hold an `ssh-rsa` member or `Carol` beside `carol` stays trusted.
    func problems(carriedFrom previous: TeamFile?) -> [String] {
        var problems: [String] = []
        if !Self.isValidTeamID(teamID) { problems.append("its team ID is not one apnsctl makes") }
        if members.isEmpty { problems.append("it has no members") }
        func carried(_ member: Member) -> Bool {
            previous?.members.contains { $0.name == member.name && $0.recipient == member.recipient } == true
        }
        var recipients: Set<String> = []
        for (index, member) in members.enumerated() {
            let old = carried(member)
            if old ? !Self.isEarlierName(member.name) : (try? Self.validateName(member.name)) == nil {
                problems.append("the member name \"\(member.name.prefix(64))\" is not one apnsctl accepts")
            }
            // The same name twice, or (unless both were there before) two names differing only by case.
            let twin = members[..<index].first {
                $0.name == member.name || (Self.sameName($0.name, member.name) && !(old && carried($0)))
            }
            if twin != nil { problems.append("it names \(member.name) twice") }
            if !recipients.insert(member.recipient).inserted {
                problems.append("two members share the recipient of \(member.name)")
            }
            if !(Self.isRecipient(member.recipient) || (old && Self.isEarlierRecipient(member.recipient))) {
                problems.append("the recipient of \(member.name) is not an age recipient or ssh-ed25519 public key")
            }
        }
        return problems
    }

    /// A name as lists signed before names were ASCII took it: letters, digits, '.', '-', '_', '@'.
    static func isEarlierName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64 && name.allSatisfy { $0.isLetter || $0.isNumber || "._-@".contains($0) }
    }

    /// An `ssh-rsa` public key line, a recipient lists signed before took (age reads it).
    static func isEarlierRecipient(_ text: String) -> Bool {
        let words = text.split(separator: " ")
        guard words.count >= 2, words[0] == "ssh-rsa", let blob = Data(base64Encoded: String(words[1])) else {
            return false
        }
        var reader = SSHReader([UInt8](blob))
        return reader.string() == Array(words[0].utf8)
    }
}
