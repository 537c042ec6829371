internal import COpenSSL

/// The OpenSSL library this process runs with, as the library itself reports it (which can be a
/// newer patch release than the headers it was built against).
public enum LinkedOpenSSL {
    /// Such as "OpenSSL 3.0.17 1 Jul 2025".
    public static var version: String {
        String(cString: OpenSSL_version(Int32(OPENSSL_VERSION)))
    }
}
