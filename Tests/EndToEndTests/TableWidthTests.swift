import Foundation
import TestSupport
import Testing

/// `list` fits the terminal: long cells are shortened ("+N more"), rows never wrap.
struct TableWidthTests {
    @Test func listFitsTheTerminal() throws {
        let store = try StoreCommandTests.Store()
        let imported = try store.run(
            ["import", CLI.cert("p12/3des-only.p12"), "--password-stdin"],
            stdin: StoreCommandTests.password + "\n"
        )
        try #require(imported.status == 0, "\(imported.stderr)")
        let wide = try store.run(["list"], environment: ["COLUMNS": "200"])
        #expect(wide.stdout.contains("com.example.app.voip"), "at 200 columns every topic is shown")
        for columns in [60, 80, 100] {
            let narrow = try store.run(["list"], environment: ["COLUMNS": String(columns)]).succeeded()
            for line in narrow.stdout.split(separator: "\n") {
                #expect(line.count <= columns, "a row wider than \(columns) columns: \(line)")
            }
            // Topics give way first: shortened where the rest leaves them room, else left out;
            // the alias and the date are never cut.
            if columns >= 100 { #expect(narrow.stdout.contains("+2 more"), "\(narrow.stdout)") }
            #expect(narrow.stdout.contains("com.example.app-universal"), "\(narrow.stdout)")
            #expect(!narrow.stdout.contains("…"), "\(narrow.stdout)")
        }
    }
}
