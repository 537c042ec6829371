import Foundation

/// Bytes that must never be printed, logged or encoded: passwords and private keys.
///
/// The storage is wiped when the last copy goes away. `description` is redacted so that
/// string interpolation in a log line or error message cannot leak the value.
public struct SecretBytes: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    final class Storage: @unchecked Sendable {
        var bytes: [UInt8]
        init(_ bytes: [UInt8]) { self.bytes = bytes }
        deinit {
            bytes.withUnsafeMutableBufferPointer { buffer in
                for index in buffer.indices { buffer[index] = 0 }
            }
        }
    }

    private let storage: Storage

    public init(_ bytes: [UInt8]) { storage = Storage(bytes) }
    public init(_ string: String) { storage = Storage(Array(string.utf8)) }

    public var count: Int { storage.bytes.count }
    public var isEmpty: Bool { storage.bytes.isEmpty }

    /// Gives the bytes to `body`; do not let them escape.
    public func withUnsafeBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try storage.bytes.withUnsafeBufferPointer(body)
    }

    /// A copy of the bytes, for APIs that need an array (TLS key loading). Use sparingly.
    public var bytes: [UInt8] { storage.bytes }

    /// The bytes as a NUL-terminated C string for OpenSSL password arguments.
    package func withCString<R>(_ body: (UnsafePointer<CChar>, Int32) throws -> R) rethrows -> R {
        var copy = storage.bytes.map { CChar(bitPattern: $0) }
        copy.append(0)
        defer { for index in copy.indices { copy[index] = 0 } }
        return try copy.withUnsafeBufferPointer { try body($0.baseAddress!, Int32(storage.bytes.count)) }
    }

    public var description: String { "<redacted \(count) bytes>" }
    public var debugDescription: String { description }
}

extension SecretBytes: Equatable {
    public static func == (lhs: SecretBytes, rhs: SecretBytes) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(lhs.storage.bytes, rhs.storage.bytes) { difference |= a ^ b }
        return difference == 0
    }
}
