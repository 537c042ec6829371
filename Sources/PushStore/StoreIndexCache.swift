import CredentialFormats
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The store's index as last decoded, by the identity of the file it was decoded from.
///
/// A command that reads many credentials' secrets reads the index again for each, under the
/// store's lock, so that a credential rotated or removed meanwhile is seen (``CredentialStore/current(_:)``).
/// Decoding the whole index each time made a check over a store of 300 credentials quadratic:
/// seven tenths of its time (docs/performance.md, "check over a store"). The index is only ever
/// replaced whole (a new file renamed over it), so the file opened, identified by its device,
/// inode, size and change times from `fstat` on the descriptor actually opened, has the content
/// it had when it was decoded; any other file is read and decoded anew.
enum StoreIndexCache {
    private struct Identity: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: [Int]
        var changed: [Int]
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var entries: [String: (identity: Identity, index: StoreIndex)] = [:]
    /// A process reads one store, or a few (tests, an exporter over several): a handful is plenty.
    private static let limit = 8

    /// The index file `relative` of `root`, opened as ``StoreFile`` opens it (no link followed,
    /// a regular file), decoded with `decode` unless the same file was decoded before.
    static func read(
        root: URL,
        relative: String,
        decode: ([UInt8]) throws -> StoreIndex
    ) throws -> StoreIndex {
        guard let fd = try StoreFile.open(root: root, relative: relative) else {
            throw InputFile.openFailure(path: relative, kind: .storeRecord, errno: ENOENT)
        }
        defer { close(fd) }
        let key = root.path + "/" + relative
        var status = stat()
        let identity: Identity? =
            fstat(fd, &status) == 0
            ? Identity(
                device: UInt64(status.st_dev),
                inode: UInt64(status.st_ino),
                size: Int64(status.st_size),
                modified: [Int(status.st_mtim.tv_sec), Int(status.st_mtim.tv_nsec)],
                changed: [Int(status.st_ctim.tv_sec), Int(status.st_ctim.tv_nsec)]
            ) : nil
        if let identity, let cached = lock.withLock({ entries[key] }), cached.identity == identity {
            return cached.index
        }
        let index = try decode(try InputFile.read(descriptor: fd, path: relative, kind: .storeRecord))
        if let identity {
            lock.withLock {
                if entries.count >= limit { entries.removeAll() }
                entries[key] = (identity, index)
            }
        }
        return index
    }
}
