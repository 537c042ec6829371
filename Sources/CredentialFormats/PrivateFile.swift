import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(Glibc)
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
private let systemWrite = Darwin.write
#endif

/// Files only their owner may read, written whole or not at all.
public enum PrivateFile {
    /// Writes `bytes` to `path` with mode 0600: a temporary file in the same folder, fsync, rename,
    /// so a reader sees the old file or the new one, never half of either. Without `overwrite`,
    /// an existing file is an error and is left as it was. `mode` is for files others must read
    /// (a metrics file node_exporter's collector reads as another user: 0644), set whatever the
    /// umask.
    public static func write(_ bytes: [UInt8], to path: String, overwrite: Bool, mode: mode_t = 0o600) throws {
        if !overwrite, FileManager.default.fileExists(atPath: path) {
            throw CredentialError(
                .fileExists,
                path: path,
                "The file exists; nothing was written.",
                hint: "Choose another path, or allow overwriting it."
            )
        }
        let destination = URL(fileURLWithPath: path)
        let temporary = destination.deletingLastPathComponent().appendingPathComponent(
            ".\(destination.lastPathComponent).\(UUID().uuidString).tmp"
        )
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw CredentialError(
                .writeFailed,
                path: path,
                "Cannot create the file (\(String(cString: strerror(errno)))).",
                hint: "Check that the folder exists and is writable."
            )
        }
        if mode != 0o600 { fchmod(fd, mode) }
        var ok = bytes.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let written = systemWrite(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { return false }
                offset += written
            }
            return true
        }
        ok = ok && fsync(fd) == 0
        close(fd)
        guard ok, rename(temporary.path, path) == 0 else {
            unlink(temporary.path)
            throw CredentialError(
                .writeFailed,
                path: path,
                "Writing the file failed (\(String(cString: strerror(errno)))); the previous one, if any, is unchanged.",
                hint: "Check free disk space and the folder's permissions."
            )
        }
    }
}

extension CredentialFile {
    /// The same certificate with a private key taken from elsewhere (the Secret Service).
    package func replacingKey(_ key: SecretBytes) -> CredentialFile {
        CredentialFile(
            path: path,
            format: format,
            certificate: certificate,
            chain: chain,
            privateKey: CredentialFile.summarize(key: key, certificate: certificate),
            protection: protection,
            privateKeyPKCS8: key,
            password: nil,
            contents: contents
        )
    }
}
