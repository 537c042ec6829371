// swift-tools-version:6.0
// Three programs built on apnsctl's libraries alone, as a Swift server would use them: send one
// notification with a stored credential, bulk-send a token file with results and resume, and
// ask whether an app is ready to be pushed to (a per-app preflight, worded by the program).
import PackageDescription

/// apnsctl's libraries, as products of its package.
func apnsctl(_ libraries: [String]) -> [Target.Dependency] {
    libraries.map { .product(name: $0, package: "apnsctl") }
}

/// What every example links: a stored credential (in a team store too), its checks, a connection.
let credentialAndConnection = ["PushStore", "PushTeam", "PushChecks", "PushGateway"]

let package = Package(
    name: "apnsctl-examples",
    platforms: [.macOS(.v13)],
    dependencies: [
        // In your own package: .package(url: "<apnsctl's repository>", from: "0.1.0").
        .package(name: "apnsctl", path: "..")
    ],
    targets: [
        .executableTarget(name: "SendOne", dependencies: apnsctl(credentialAndConnection)),
        .executableTarget(name: "BulkSend", dependencies: apnsctl(credentialAndConnection + ["PushBulk"])),
        .executableTarget(name: "AppPreflight", dependencies: apnsctl(credentialAndConnection)),
    ]
)
