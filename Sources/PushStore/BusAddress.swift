import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A point in time that waits count down to.
struct Deadline {
    let end: DispatchTime

    init(after seconds: TimeInterval) { end = .now() + seconds }

    /// What is left, in whole milliseconds for `poll`, rounded up; 0 once passed.
    var remainingMilliseconds: Int32 {
        let now = DispatchTime.now().uptimeNanoseconds
        guard end.uptimeNanoseconds > now else { return 0 }
        return Int32(clamping: (end.uptimeNanoseconds - now + 999_999) / 1_000_000)
    }

    /// The same moment on the wall clock, for a condition's wait.
    var date: Date {
        let now = DispatchTime.now().uptimeNanoseconds
        let left = end.uptimeNanoseconds > now ? end.uptimeNanoseconds - now : 0
        return Date(timeIntervalSinceNow: Double(left) / 1e9)
    }
}

/// One address of a D-Bus server that this client can connect to: a Unix socket by path, or in
/// Linux's abstract namespace.
struct BusAddress: Equatable {
    enum Socket: Equatable {
        case path(String)
        case abstract(String)
    }

    let socket: Socket

    /// The session bus's addresses: `DBUS_SESSION_BUS_ADDRESS`, or, when that is unset or empty,
    /// `$XDG_RUNTIME_DIR/bus` as GLib and libdbus look for it. Entries of kinds not read here
    /// are left out; throws when none is left.
    static func sessionAddresses(environment: [String: String]? = nil) throws -> [BusAddress] {
        func value(_ name: String) -> String? {
            if let environment { return environment[name] }
            return getenv(name).map { String(cString: $0) }
        }
        if let text = value("DBUS_SESSION_BUS_ADDRESS"), !text.isEmpty {
            let addresses = parse(text)
            guard !addresses.isEmpty else {
                throw SessionBusConnection.Failure("no address in DBUS_SESSION_BUS_ADDRESS is a Unix socket")
            }
            return addresses
        }
        if let runtime = value("XDG_RUNTIME_DIR"), !runtime.isEmpty {
            return [BusAddress(socket: .path(runtime + "/bus"))]
        }
        throw SessionBusConnection.Failure("there is no session bus address")
    }

    /// The addresses of a D-Bus address list (`;`-separated `transport:key=value,…`, values
    /// percent-escaped) that name a Unix socket to connect to.
    static func parse(_ text: String) -> [BusAddress] {
        text.split(separator: ";").compactMap { entry in
            guard let colon = entry.firstIndex(of: ":"), entry[..<colon] == "unix" else { return nil }
            var keys: [String: String] = [:]
            for pair in entry[entry.index(after: colon)...].split(separator: ",") {
                guard let equals = pair.firstIndex(of: "="),
                    let value = unescape(pair[pair.index(after: equals)...])
                else { return nil }
                keys[String(pair[..<equals])] = value
            }
            switch (keys["path"], keys["abstract"]) {
            case (let path?, nil) where !path.isEmpty: return BusAddress(socket: .path(path))
            case (nil, let name?) where !name.isEmpty: return BusAddress(socket: .abstract(name))
            default: return nil  // a server's listening form (tmpdir, dir, runtime) or a conflict
            }
        }
    }

    private static func unescape(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next(), let low = iterator.next(),
                let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            else { return nil }
            bytes.append(value)
        }
        guard !bytes.contains(0) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    /// A connected, non-blocking, close-on-exec socket.
    func connect(deadline: Deadline) throws -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let name: [UInt8]
        switch socket {
        case .path(let path): name = Array(path.utf8)
        case .abstract(let abstract): name = [0] + Array(abstract.utf8)
        }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        // A path needs room for its terminating NUL; an abstract name (its NUL first) does not.
        guard name.first == 0 ? name.count <= capacity : name.count < capacity else {
            throw SessionBusConnection.Failure("the session bus's socket path is longer than a socket address holds")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in name.enumerated() { buffer[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + name.count + (name.first == 0 ? 0 : 1))
        let descriptor = Glibc.socket(
            AF_UNIX,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
            0
        )
        guard descriptor >= 0 else {
            throw SessionBusConnection.Failure("no socket for the session bus (\(String(cString: strerror(errno))))")
        }
        while true {
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, length) }
            }
            if result == 0 { break }
            let reason = errno
            if reason == EINTR { continue }
            // A listening Unix socket whose queue is full refuses a non-blocking connect with
            // EAGAIN: tried again shortly, until the deadline.
            if reason == EAGAIN, deadline.remainingMilliseconds > 0 {
                usleep(1_000)
                continue
            }
            var failure: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            var entry = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            if reason == EINPROGRESS, poll(&entry, 1, deadline.remainingMilliseconds) == 1,
                getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &failure, &size) == 0, failure == 0
            {
                break
            }
            close(descriptor)
            throw SessionBusConnection.Failure(
                reason == EAGAIN || reason == EINPROGRESS
                    ? "the session bus did not take the connection in time"
                    : "the session bus cannot be connected to (\(String(cString: strerror(reason))))"
            )
        }
        return descriptor
    }
}
