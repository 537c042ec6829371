import Foundation
import PushStore
import TestSupport
import Testing

@Suite struct ProcessProtectionTests {
    @Test func aProtectedProcessCannotBeDumpedAndHasNoCoreSize() throws {
        #expect(ProcessProtection.protectSecretsInMemory())
        #expect(ProcessProtection.isDumpable == false)
        let limits = try String(contentsOfFile: "/proc/self/limits", encoding: .utf8)
        let core = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") })
        #expect(core.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2) == ["0", "0"])
    }
}
