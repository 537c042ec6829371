// swift-tools-version:6.0
// Three programs built on apnsctl's libraries alone, as a Swift server would use them: send one
// notification with a stored credential, bulk-send a token file with results and resume, and
// ask whether an app is ready to be pushed to (a per-app preflight, worded by the program).
import PackageDescription

let package = Package(
    name: "apnsctl-examples",
    platforms: [.macOS(.v13)],
    dependencies: [
        // In your own package: .package(url: "<apnsctl's repository>", from: "0.1.0").
        .package(name: "apnsctl", path: "..")
    ],
    targets: [
        .executableTarget(
            name: "SendOne",
            dependencies: [
                .product(name: "PushStore", package: "apnsctl"),
                .product(name: "PushTeam", package: "apnsctl"),
                .product(name: "PushChecks", package: "apnsctl"),
                .product(name: "PushGateway", package: "apnsctl"),
            ]
        ),
        .executableTarget(
            name: "BulkSend",
            dependencies: [
                .product(name: "PushStore", package: "apnsctl"),
                .product(name: "PushTeam", package: "apnsctl"),
                .product(name: "PushChecks", package: "apnsctl"),
                .product(name: "PushGateway", package: "apnsctl"),
                .product(name: "PushBulk", package: "apnsctl"),
            ]
        ),
        .executableTarget(
            name: "AppPreflight",
            dependencies: [
                .product(name: "PushStore", package: "apnsctl"),
                .product(name: "PushTeam", package: "apnsctl"),
                .product(name: "PushChecks", package: "apnsctl"),
                .product(name: "PushGateway", package: "apnsctl"),
            ]
        ),
    ]
)
