// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "apnsctl",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "apnsctl", targets: ["apnsctl"]),
        .library(name: "PushCore", targets: ["PushCore"]),
        .library(name: "CredentialFormats", targets: ["CredentialFormats"]),
        .library(name: "PushStore", targets: ["PushStore"]),
        .library(name: "PushTeam", targets: ["PushTeam"]),
        .library(name: "PushChecks", targets: ["PushChecks"]),
        .library(name: "PushGateway", targets: ["PushGateway"]),
        .library(name: "PushBulk", targets: ["PushBulk"]),
        .library(name: "LocalGateway", targets: ["LocalGateway"]),
        .library(name: "PushMonitoring", targets: ["PushMonitoring"]),
        .library(name: "PushVault", targets: ["PushVault"]),
        .library(name: "PushVaultStore", targets: ["PushVaultStore"]),
    ],
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
        .systemLibrary(
            name: "COpenSSL",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(
            name: "COpenSSLShim",
            dependencies: ["COpenSSL"],
            linkerSettings: [.linkedLibrary("dl")]
        ),
        // crypt_r from libxcrypt: verifies the bcrypt hashes of the exporter's basic_auth_users.
        .systemLibrary(
            name: "CLibCrypt",
            pkgConfig: "libcrypt",
            providers: [.apt(["libcrypt-dev"])]
        ),
        // The functions of libsecret and GLib the store calls, declared by the project and
        // forwarded to the libraries, loaded on first use (dlopen), not at every start of the
        // program; scripts/check-libsecret-header holds the declarations to the real headers.
        .target(
            name: "CLibSecret",
            linkerSettings: [.linkedLibrary("dl")]
        ),
        // The APNs vocabulary shared by client, gateway and CLI (types, reasons, payload and
        // request rules, provider tokens): no NIO, no C of its own, no file system, no processes,
        // no argv.
        .target(
            name: "PushCore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto")
            ]
        ),
        // What reads and writes credential formats: PKCS#12 (read in every encryption, and
        // written), PEM, DER, .p8 provider keys, push certificates (Apple's OIDs, topics,
        // environments, validity, fingerprints), OpenSSL through its shims, and the one
        // credential error. Never libsecret: the local gateway links this, not the store.
        .target(
            name: "CredentialFormats",
            dependencies: [
                "PushCore",
                "COpenSSL",
                "COpenSSLShim",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
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
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                // BlockingPool's threads (NIOThreadPool); no networking.
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // The team store: a store shared through git, its secrets in age files, the signed member
        // list; git, age and ssh-keygen run as child programs. StoreOpener opens a folder as
        // whichever store it is.
        .target(
            name: "PushTeam",
            dependencies: [
                "PushCore",
                "CredentialFormats",
                "PushStore",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Judging: checks of credentials, apps and stores as verdicts and reports, and the
        // preflight (a check followed by a connection).
        .target(
            name: "PushChecks",
            dependencies: [
                "PushCore",
                "CredentialFormats",
                "PushStore",
                "PushGateway",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        // The NIO channel handlers the client and the local gateway share; package access only.
        .target(
            name: "PushTransport",
            dependencies: [
                "PushCore",
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .target(
            name: "PushGateway",
            dependencies: [
                "PushCore",
                "CredentialFormats",
                "PushTransport",
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The bulk sender: its engine (a state machine that does no I/O), a run's files (results,
        // journal, lock, stop record, token sources) and the NIO driver that sends through
        // PushGateway's connections.
        .target(
            name: "PushBulk",
            dependencies: [
                "PushCore",
                "CredentialFormats",
                "PushGateway",
                "PushTransport",
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "LocalGateway",
            dependencies: [
                "PushCore",
                "CredentialFormats",
                "PushTransport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // A store's secrets in Vault/OpenBao: KV entries, and token keys in Transit that never
        // leave it (the SecretStore seam of PushStore, over the PushVault client).
        .target(
            name: "PushVaultStore",
            dependencies: [
                "PushCore",
                "CredentialFormats",
                "PushStore",
                "PushVault",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
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
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        // The HashiCorp Vault / OpenBao client a store backend plugs into: configuration as Vault's
        // own clients take it, a small HTTP/1.1 client on NIO, KV version 2, Transit (BYOK import
        // of a token key, signing) and the provider token a fleet shares. Never libsecret.
        .target(
            name: "PushVault",
            dependencies: [
                "PushCore",
                "COpenSSL",
                "COpenSSLShim",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .executableTarget(
            name: "apnsctl",
            dependencies: [
                "CredentialFormats",
                "PushStore",
                "PushTeam",
                "PushChecks",
                "PushGateway",
                "PushBulk",
                "PushMonitoring",
                "LocalGateway",
                "PushVaultStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
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
            dependencies: [
                "LocalGateway",
                "PushGateway",
                "CredentialFormats",
                "PushStore",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            path: "Tests/TestSupport"
        ),
        .testTarget(
            name: "PushCoreTests",
            dependencies: ["PushCore", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(
            name: "PushBulkTests",
            dependencies: [
                "PushBulk",
                "PushGateway",
                "TestSupport",
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .testTarget(
            name: "PushStoreTests",
            dependencies: [
                "CredentialFormats",
                "PushStore",
                "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "PushTeamTests",
            dependencies: [
                "CredentialFormats",
                "PushStore",
                "PushTeam",
                "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The formats' fixtures are judged here too: their manifest says what each must report.
        .testTarget(
            name: "PushChecksTests",
            dependencies: [
                "CredentialFormats",
                "PushStore",
                "PushTeam",
                "PushChecks",
                "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        .testTarget(
            name: "PushGatewayTests",
            dependencies: [
                "PushGateway",
                "PushBulk",
                "PushTransport",
                "PushMonitoring",
                "TestSupport",
                "LocalGateway",
                "CredentialFormats",
                "PushStore",
                "PushChecks",
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "LocalGatewayTests",
            dependencies: [
                "LocalGateway",
                "TestSupport",
                "PushGateway",
                "CredentialFormats",
                "PushStore",
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Runs against a real OpenBao dev server (.venv/bin/bao, which scripts/setup installs).
        .testTarget(
            name: "PushVaultTests",
            dependencies: [
                "TestSupport",
                "PushBulk",
                "PushVault",
                "PushVaultStore",
                "PushStore",
                "PushGateway",
                "LocalGateway",
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The command line's own reading, in process: `send`'s options as the argument parser
        // reads them.
        .testTarget(
            name: "CommandLineTests",
            dependencies: [
                "apnsctl",
                "PushBulk",
                "PushCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
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
