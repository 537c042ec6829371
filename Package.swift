// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "apnsctl",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "apnsctl", targets: ["apnsctl"]),
        .library(name: "PushCore", targets: ["PushCore"]),
        .library(name: "CredentialFormats", targets: ["CredentialFormats"]),
        .library(name: "PushCredentials", targets: ["PushCredentials"]),
        .library(name: "PushGateway", targets: ["PushGateway"]),
        .library(name: "PushBulk", targets: ["PushBulk"]),
        .library(name: "LocalGateway", targets: ["LocalGateway"]),
        .library(name: "PushMonitoring", targets: ["PushMonitoring"]),
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
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(
            name: "COpenSSLShim",
            dependencies: ["COpenSSL"]
        ),
        // crypt_r from libxcrypt: verifies the bcrypt hashes of the exporter's basic_auth_users.
        .systemLibrary(
            name: "CLibCrypt",
            pkgConfig: "libcrypt",
            providers: [.apt(["libcrypt-dev"])]
        ),
        .systemLibrary(
            name: "CLibSecret",
            pkgConfig: "libsecret-1",
            providers: [.apt(["libsecret-1-dev"])]
        ),
        // The APNs vocabulary shared by client, gateway and CLI (types, reasons, payload and
        // request rules, provider tokens): no NIO, no C of its own, no file system, no processes.
        // swift-system for RawPath's FilePath, a value.
        .target(
            name: "PushCore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SystemPackage", package: "swift-system"),
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
        // The store (index, files, the Secret Service, the team store), loading, checks and
        // reports, on top of the formats.
        .target(
            name: "PushCredentials",
            dependencies: [
                "PushCore",
                "CredentialFormats",
                // ProcessProtection's C (prctl, the core size limit) is in the shim.
                "COpenSSLShim",
                "CLibSecret",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
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
                "PushCredentials",
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
                "PushCredentials",
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
        // Prometheus: the check's series, and the exporter that serves them and probes.
        .target(
            name: "PushMonitoring",
            dependencies: [
                "PushCore",
                "CredentialFormats",
                "PushCredentials",
                "PushGateway",
                "CLibCrypt",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        .executableTarget(
            name: "apnsctl",
            dependencies: [
                "CredentialFormats",
                "PushCredentials",
                "PushGateway",
                "PushBulk",
                "PushMonitoring",
                "LocalGateway",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
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
                "PushCredentials",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            path: "Tests/TestSupport"
        ),
        .testTarget(
            name: "PushCoreTests",
            dependencies: ["PushCore"]
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
            name: "PushCredentialsTests",
            dependencies: [
                "CredentialFormats",
                "PushCredentials",
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
                "PushCredentials",
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
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
                "PushCredentials",
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "CredentialFormats", "PushCredentials", "PushGateway", "PushBulk", "LocalGateway", "TestSupport",
            ]
        ),
    ]
)
