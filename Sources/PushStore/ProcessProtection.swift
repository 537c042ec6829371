internal import COpenSSLShim

/// Keeps the passwords and private keys this process holds out of core dumps and out of
/// reach of a debugger attached by another process of the same user.
public enum ProcessProtection {
    /// Marks the process not dumpable and sets its core size limit to 0. Call once, before any
    /// secret is read. Returns false where either could not be set.
    @discardableResult
    public static func protectSecretsInMemory() -> Bool { apnsctl_protect_process_memory() == 0 }

    /// Whether the process may be dumped (nil where that cannot be told).
    public static var isDumpable: Bool? {
        let value = apnsctl_process_is_dumpable()
        return value < 0 ? nil : value == 1
    }
}
