import Foundation
import TestSupport
import Testing

/// Output that cannot be written is a failure (exit 2, said on stderr), whatever the format.
struct OutputFailureTests {
    static func toFullDevice(_ arguments: [String]) throws -> CLI.Result {
        try CLI.runProgram(
            "bash",
            ["-c", #""$0" "$@" > /dev/full"#, CLI.binary] + arguments + ["--password-env", "P12"],
            environment: ["P12": "apnsctl-test"]
        )
    }

    static let file = CLI.cert("p12/3des-only.p12")

    @Test(arguments: [
        ["inspect", file],
        ["inspect", "--json", file],
        ["check", file],
        ["check", "--json", file],
        ["check", "--format", "prometheus", file],
    ])
    func everyFormatReportsAFullDisk(_ arguments: [String]) throws {
        try Self.toFullDevice(arguments)
            .exited(2, stderr: "standard output could not be written", context: "\(arguments)")
    }

    @Test func listToAFullDiskFails() throws {
        let folder = try TemporaryFolder()
        for format in [[], ["--json"]] {
            try CLI.runProgram(
                "bash",
                ["-c", #""$0" "$@" > /dev/full"#, CLI.binary, "list", "--store", folder.path("store")]
                    + format
            ).exited(2, context: "list \(format)")
        }
    }
}
