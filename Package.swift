// swift-tools-version:6.0
import PackageDescription

/// The package each external module comes from, so that a target lists only the modules it imports.
let packageOfModule: [String: String] = [
    "ArgumentParser": "swift-argument-parser",
    "Crypto": "swift-crypto", "_CryptoExtras": "swift-crypto",
    "Logging": "swift-log",
    "NIOConcurrencyHelpers": "swift-nio", "NIOCore": "swift-nio", "NIOEmbedded": "swift-nio",
    "NIOHTTP1": "swift-nio", "NIOPosix": "swift-nio", "NIOTLS": "swift-nio",
    "NIOHPACK": "swift-nio-http2", "NIOHTTP2": "swift-nio-http2",
    "NIOSSL": "swift-nio-ssl",
    "SwiftASN1": "swift-asn1",
    "SystemPackage": "swift-system",
    "X509": "swift-certificates",
    "Yams": "Yams",
]

/// The products of the package dependencies that give these modules.
func external(_ modules: [String]) -> [Target.Dependency] {
    modules.map { module in
        guard let package = packageOfModule[module] else { fatalError("Add \(module)'s package to packageOfModule") }
        return .product(name: module, package: package)
    }
}

/// The libraries, each its own product of the same name.
let libraries = [
    "PushCore", "CredentialFormats", "PushStore", "PushTeam", "PushChecks", "PushGateway", "PushBulk", "LocalGateway",
    "PushMonitoring", "PushVault", "PushVaultStore",
]

let package = Package(
    name: "apnsctl",
    platforms: [.macOS(.v13)],
    products: [.executable(name: "apnsctl", targets: ["apnsctl"])]
        + libraries.map { .library(name: $0, targets: [$0]) },
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        // The exporter's --web.config.file, in exporter-toolkit's YAML.
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
    ],
    targets: [
        // OpenSSL 3's headers (Debian's libssl-dev puts them on the default include path). The
        // library itself is not linked: COpenSSLShim forwards each function the program calls to
        // libcrypto.so.3, loaded on first use, so that a command that needs no OpenSSL (a cold
        // `send`) does not load it.
        .systemLibrary(name: "COpenSSL", providers: [.apt(["libssl-dev"])]),
        .target(name: "COpenSSLShim", dependencies: ["COpenSSL"], linkerSettings: [.linkedLibrary("dl")]),
        // crypt_r from libxcrypt: verifies the bcrypt hashes of the exporter's basic_auth_users.
        .systemLibrary(name: "CLibCrypt", pkgConfig: "libcrypt", providers: [.apt(["libcrypt-dev"])]),
        // The functions of libsecret and GLib the store calls, declared by the project and
        // forwarded to the libraries, loaded on first use (dlopen), not at every start of the
        // program; scripts/check-libsecret-header holds the declarations to the real headers.
        .target(name: "CLibSecret", linkerSettings: [.linkedLibrary("dl")]),
        // The APNs vocabulary shared by client, gateway and CLI (types, reasons, payload and
        // request rules, provider tokens): no NIO, no C of its own, no file system, no processes,
        // no argv.
        .target(name: "PushCore", dependencies: external(["Crypto"])),
        // What reads and writes credential formats: PKCS#12 (read in every encryption, and
        // written), PEM, DER, .p8 provider keys, push certificates (Apple's OIDs, topics,
        // environments, validity, fingerprints), OpenSSL through its shims, and the one
        // credential error. Never libsecret: the local gateway links this, not the store.
        .target(
            name: "CredentialFormats",
            dependencies: ["PushCore", "COpenSSL", "COpenSSLShim"]
                + external(["X509", "SwiftASN1", "Crypto", "_CryptoExtras"])
        ),
        // The store (index, files, journal, lock), the Secret Service and loading, on top of the
        // formats. No networking, no git: the team store builds on its seams (SecretStore, the
        // change observer).
        .target(
            name: "PushStore",
            dependencies: [
                "PushCore",
                "CredentialFormats",
                // ProcessProtection's C (prctl, the core size limit) is in the shim.
                "COpenSSLShim",
                "CLibSecret",
            ]
                + external(["X509", "SwiftASN1"])
                // BlockingPool's threads (NIOThreadPool); no networking.
                + external(["NIOPosix"])
        ),
        // The team store: a store shared through git, its secrets in age files, the signed member
        // list; git, age and ssh-keygen run as child programs. StoreOpener opens a folder as
        // whichever store it is.
        .target(
            name: "PushTeam",
            dependencies: ["PushCore", "CredentialFormats", "PushStore"] + external(["Crypto"])
        ),
        // Judging: checks of credentials, apps and stores as verdicts and reports, and the
        // preflight (a check followed by a connection).
        .target(
            name: "PushChecks",
            dependencies: ["PushCore", "CredentialFormats", "PushStore", "PushGateway"]
                + external(["X509", "SwiftASN1"])
        ),
        // The NIO channel handlers the client and the local gateway share; package access only.
        .target(name: "PushTransport", dependencies: ["PushCore"] + external(["NIOCore"])),
        .target(
            name: "PushGateway",
            dependencies: ["PushCore", "CredentialFormats", "PushTransport"]
                + external([
                    "SystemPackage", "NIOCore", "NIOPosix", "NIOHTTP1", "NIOSSL", "NIOHTTP2", "NIOTLS",
                    "NIOConcurrencyHelpers", "X509", "Crypto", "Logging",
                ])
        ),
        // The bulk sender: its engine (a state machine that does no I/O), a run's files (results,
        // journal, lock, stop record, token sources) and the NIO driver that sends through
        // PushGateway's connections.
        .target(
            name: "PushBulk",
            dependencies: ["PushCore", "CredentialFormats", "PushGateway", "PushTransport"]
                + external([
                    "SystemPackage", "NIOCore", "NIOPosix", "NIOHTTP2", "NIOHPACK", "NIOConcurrencyHelpers", "Crypto",
                ])
        ),
        .target(
            name: "LocalGateway",
            dependencies: ["PushCore", "CredentialFormats", "PushTransport"]
                + external([
                    "NIOCore", "NIOPosix", "NIOSSL", "NIOHTTP2", "NIOHPACK", "NIOConcurrencyHelpers", "X509",
                    "SwiftASN1", "Crypto", "_CryptoExtras",
                ])
        ),
        // A store's secrets in Vault/OpenBao: KV entries, and token keys in Transit that never
        // leave it (the SecretStore seam of PushStore, over the PushVault client).
        .target(
            name: "PushVaultStore",
            dependencies: ["PushCore", "CredentialFormats", "PushStore", "PushVault"] + external(["Crypto"])
        ),
        // Prometheus: the check's series, and the exporter that serves them and probes.
        .target(
            name: "PushMonitoring",
            dependencies: [
                "PushCore",
                "CredentialFormats",
                "PushStore",
                // Its shutdown stops the team store's child programs (git, age).
                "PushTeam",
                "PushChecks",
                "PushGateway",
                // The descriptor budget its connection cap shares with the local gateway.
                "PushTransport",
                "CLibCrypt",
            ]
                + external(["NIOCore", "NIOPosix", "NIOHTTP1", "NIOSSL", "NIOConcurrencyHelpers", "Yams"])
        ),
        // The HashiCorp Vault / OpenBao client a store backend plugs into: configuration as Vault's
        // own clients take it, a small HTTP/1.1 client on NIO, KV version 2, Transit (BYOK import
        // of a token key, signing) and the provider token a fleet shares. Never libsecret.
        .target(
            name: "PushVault",
            dependencies: ["PushCore", "COpenSSL", "COpenSSLShim"]
                + external([
                    "NIOCore", "NIOPosix", "NIOHTTP1", "NIOConcurrencyHelpers", "NIOSSL", "Crypto", "_CryptoExtras",
                ])
        ),
        .executableTarget(
            name: "apnsctl",
            dependencies: [
                "CredentialFormats", "PushStore", "PushTeam", "PushChecks", "PushGateway", "PushBulk", "PushMonitoring",
                "LocalGateway", "PushVaultStore",
            ]
                + external(["ArgumentParser", "Logging"]),
            linkerSettings: [
                // A release build links the Swift runtime statically, and the toolchain's static
                // link then exports every symbol of the program (about 40,000) for the dynamic
                // loader to hash and resolve at each start: a quarter of `apnsctl --version`'s
                // time. Nothing looks them up (a debug build exports none), so none are exported
                // (docs/performance.md, "The cold probe").
                .unsafeFlags(["-Xlinker", "--no-export-dynamic"], .when(platforms: [.linux], configuration: .release))
            ]
        ),
        // What the test targets share: fixture paths, temporary folders, the CLI runner, the test
        // PKI, and a local gateway whose stop is awaited.
        .target(
            name: "TestSupport",
            dependencies: ["LocalGateway", "PushGateway", "CredentialFormats", "PushStore"]
                + external(["NIOConcurrencyHelpers", "NIOEmbedded", "NIOHTTP2", "NIOHPACK"]),
            path: "Tests/TestSupport"
        ),
        .testTarget(name: "PushCoreTests", dependencies: ["PushCore"] + external(["Crypto"])),
        // The formats on their own: PKCS#12, PEM, DER and .p8 read and written with the real
        // OpenSSL, against the committed fixtures and what their manifest says each must report.
        .testTarget(
            name: "CredentialFormatsTests",
            dependencies: ["CredentialFormats", "PushCore", "TestSupport"] + external(["Crypto", "X509", "SwiftASN1"])
        ),
        // The monitoring library's parts that need no server: the exposition text (read back by
        // Prometheus' own parser), the probe cache, basic authentication, the web configuration.
        .testTarget(
            name: "PushMonitoringTests",
            dependencies: ["PushMonitoring", "PushChecks", "PushStore", "CredentialFormats", "PushCore", "TestSupport"]
                + external(["NIOPosix"])
        ),
        .testTarget(
            name: "PushBulkTests",
            dependencies: ["PushBulk", "PushGateway", "TestSupport"]
                + external(["NIOEmbedded", "NIOCore", "NIOHTTP2", "NIOHPACK", "SystemPackage"])
        ),
        .testTarget(
            name: "PushStoreTests",
            dependencies: ["CredentialFormats", "PushStore", "TestSupport"] + external(["Crypto"])
        ),
        .testTarget(
            name: "PushTeamTests",
            dependencies: ["CredentialFormats", "PushStore", "PushTeam", "TestSupport"] + external(["Crypto"])
        ),
        // The formats' fixtures are judged here too: their manifest says what each must report.
        .testTarget(
            name: "PushChecksTests",
            dependencies: ["CredentialFormats", "PushStore", "PushTeam", "PushChecks", "TestSupport"]
                + external(["Crypto", "X509", "SwiftASN1"])
        ),
        .testTarget(
            name: "PushGatewayTests",
            dependencies: [
                "PushGateway", "PushBulk", "PushTransport", "PushMonitoring", "TestSupport", "LocalGateway",
                "CredentialFormats", "PushStore", "PushChecks",
            ]
                + external([
                    "NIOEmbedded", "NIOCore", "NIOHTTP1", "NIOConcurrencyHelpers", "NIOPosix", "NIOSSL", "NIOHTTP2",
                    "NIOTLS", "X509", "Crypto",
                ])
        ),
        .testTarget(
            name: "LocalGatewayTests",
            dependencies: ["LocalGateway", "TestSupport", "PushGateway", "CredentialFormats", "PushStore"]
                + external(["NIOEmbedded", "NIOCore", "NIOPosix", "NIOSSL", "NIOHTTP2", "X509", "Crypto"])
        ),
        // Runs against a real OpenBao dev server (.venv/bin/bao, which scripts/setup installs).
        .testTarget(
            name: "PushVaultTests",
            dependencies: [
                "TestSupport", "PushBulk", "PushVault", "PushVaultStore", "PushStore", "PushGateway", "LocalGateway",
            ]
                + external(["NIOHTTP1", "NIOConcurrencyHelpers", "Crypto"])
        ),
        // The command line's own reading, in process: `send`'s options as the argument parser
        // reads them.
        .testTarget(
            name: "CommandLineTests",
            dependencies: ["apnsctl", "PushBulk", "PushCore"] + external(["ArgumentParser"])
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "CredentialFormats", "PushStore", "PushTeam", "PushChecks", "PushGateway", "PushBulk", "LocalGateway",
                "TestSupport",
            ]
        ),
    ]
)
