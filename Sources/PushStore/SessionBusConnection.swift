import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A connection of our own to the D-Bus session bus, for the plain read of a secret: a Unix
/// socket, the EXTERNAL authentication, `Hello`, then method calls sent together and their
/// answers read back in one wait. It carries no libraries: GLib, GIO, GObject and libsecret (a
/// dozen shared libraries with their start-up) are loaded only when this path cannot answer and
/// the read that explains takes over (docs/performance.md, "the cold probe, sixth round").
///
/// What it does not do is refused up front, so that the caller falls back: bus addresses other
/// than `unix:path=` and `unix:abstract=`, any authentication but EXTERNAL, file descriptors.
/// Every wait has a deadline; the socket is close-on-exec; a message over 16 MiB is refused.
/// Once anything fails (the peer, a timeout, a message that does not parse) the connection is
/// broken for good and the next use connects anew.
final class SessionBusConnection: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// A method call: where, what, and its arguments.
    struct Call {
        var destination = "org.freedesktop.secrets"
        var path: String
        var interface: String
        var member: String
        var arguments: [DBusValue]
    }

    /// Answers are far smaller (a `GetSecrets` of 300 credentials is some 200 KiB); a larger
    /// message is a confused or hostile peer.
    static let maximumMessageLength = 16 << 20

    /// The name the bus gave this connection.
    private(set) var uniqueName = ""
    private let descriptor: Int32
    private let lock = NSLock()
    private var nextSerial: UInt32 = 1
    private var received: [UInt8] = []
    /// Set once anything fails; its own lock, so that asking does not wait for a call in flight.
    private let brokenLock = NSLock()
    private var brokenFlag = false

    private let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 32_768, alignment: 8)

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit {
        close(descriptor)
        chunk.deallocate()
    }

    var isBroken: Bool { brokenLock.withLock { brokenFlag } }

    private func markBroken() { brokenLock.withLock { brokenFlag = true } }

    // MARK: The process's connection

    private static let sharedLock = NSLock()
    nonisolated(unsafe) private static var current: SessionBusConnection?

    /// The process's connection, connected on first use and again after one broke.
    static func shared(environment: [String: String]? = nil, timeout: TimeInterval) throws -> SessionBusConnection {
        try sharedLock.withLock {
            if let current, !current.isBroken { return current }
            let connection = try connect(
                addresses: try BusAddress.sessionAddresses(environment: environment),
                deadline: Deadline(after: timeout)
            )
            current = connection
            return connection
        }
    }

    // MARK: Connecting

    /// Connects to the first address that takes the connection, authenticates and says `Hello`.
    static func connect(addresses: [BusAddress], deadline: Deadline) throws -> SessionBusConnection {
        var lastFailure = Failure("no address of the session bus can be used here")
        for address in addresses {
            do {
                let connection = SessionBusConnection(descriptor: try address.connect(deadline: deadline))
                try connection.authenticate(deadline: deadline)
                return connection
            } catch let failure as Failure {
                lastFailure = failure
            }
        }
        throw lastFailure
    }

    /// EXTERNAL with this process's user id, `BEGIN` and `Hello` written at once (the bus reads
    /// them in order), then the bus's `OK` and `Hello`'s answer read back: one round trip.
    private func authenticate(deadline: Deadline) throws {
        // The user id's decimal digits, each as two hex digits (ASCII 0x30-0x39).
        // The effective user id, which the bus compares with the socket's peer credentials.
        let user = String(geteuid()).utf8.map { String($0, radix: 16) }.joined()
        let hello = DBusMessage(
            kind: .methodCall,
            serial: takeSerial(),
            path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus",
            member: "Hello",
            destination: "org.freedesktop.DBus"
        )
        let greeting = [0] + Array("AUTH EXTERNAL \(user)\r\nBEGIN\r\n".utf8)
        do {
            try write(greeting + (try hello.encoded()), deadline: deadline)
            let answer = try readLine(deadline: deadline)
            guard answer.hasPrefix("OK ") else {
                throw Failure("the session bus refused EXTERNAL authentication (\(answer.prefix(80)))")
            }
            let reply = try readReply(to: hello.serial, deadline: deadline)
            guard reply.kind == .methodReturn, case .string(let name)? = reply.body.first else {
                throw Failure("the session bus did not answer Hello")
            }
            uniqueName = name
        } catch {
            markBroken()
            throw error
        }
    }

    // MARK: Calls

    /// Sends every call before reading any answer, then reads them all, until `deadline`: the
    /// answers in order, each a method return or an error message. Throws when the connection
    /// fails (and is then broken); a call that cannot be encoded throws before anything is sent
    /// and leaves the connection as it was.
    func call(_ calls: [Call], deadline: Deadline) throws -> [DBusMessage] {
        try lock.withLock {
            guard !isBroken else { throw Failure("the connection to the session bus was lost") }
            let (serials, outgoing) = try encode(calls, flags: DBusMessage.noAutoStart)
            do {
                try write(outgoing, deadline: deadline)
                var answers: [UInt32: DBusMessage] = [:]
                while answers.count < serials.count {
                    let message = try readMessage(deadline: deadline)
                    if let serial = message.replySerial, serials.contains(serial),
                        message.kind == .methodReturn || message.kind == .error
                    {
                        answers[serial] = message
                    }
                    // Signals (NameAcquired) and anything else are not ours to answer.
                }
                return serials.map { answers[$0]! }
            } catch {
                markBroken()
                throw error
            }
        }
    }

    /// Sends calls that want no answer (NO_REPLY_EXPECTED), without waiting for anything but
    /// the socket.
    func send(_ calls: [Call], deadline: Deadline) throws {
        try lock.withLock {
            guard !isBroken else { throw Failure("the connection to the session bus was lost") }
            let (_, outgoing) = try encode(calls, flags: DBusMessage.noAutoStart | DBusMessage.noReplyExpected)
            do {
                try write(outgoing, deadline: deadline)
            } catch {
                markBroken()
                throw error
            }
        }
    }

    /// The calls' serials and bytes; serials are taken only when every call encodes.
    private func encode(_ calls: [Call], flags: UInt8) throws -> (serials: [UInt32], bytes: [UInt8]) {
        var serials: [UInt32] = []
        var outgoing: [UInt8] = []
        var serial = nextSerial
        for call in calls {
            let message = DBusMessage(
                kind: .methodCall,
                flags: flags,
                serial: serial,
                path: call.path,
                interface: call.interface,
                member: call.member,
                destination: call.destination,
                body: call.arguments
            )
            serials.append(serial)
            outgoing += try message.encoded()
            serial = serial == UInt32.max ? 1 : serial + 1
        }
        nextSerial = serial
        return (serials, outgoing)
    }

    private func takeSerial() -> UInt32 {
        defer { nextSerial = nextSerial == UInt32.max ? 1 : nextSerial + 1 }
        return nextSerial
    }

    // MARK: The socket

    private func write(_ bytes: [UInt8], deadline: Deadline) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                Glibc.send(descriptor, buffer.baseAddress! + sent, buffer.count - sent, Int32(MSG_NOSIGNAL))
            }
            if count > 0 {
                sent += count
            } else if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                try wait(for: Int16(POLLOUT), deadline: deadline)
            } else {
                throw Failure("writing to the session bus failed (\(String(cString: strerror(errno))))")
            }
        }
    }

    /// Reads more bytes into `received`, through a buffer kept for the connection's life (not
    /// one zeroed per read).
    private func receive(deadline: Deadline) throws {
        while true {
            let count = recv(descriptor, chunk.baseAddress, chunk.count, 0)
            if count > 0 {
                received.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<count]))
                return
            }
            if count == 0 { throw Failure("the session bus closed the connection") }
            guard errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else {
                throw Failure("reading from the session bus failed (\(String(cString: strerror(errno))))")
            }
            try wait(for: Int16(POLLIN), deadline: deadline)
        }
    }

    private func wait(for events: Int16, deadline: Deadline) throws {
        var entry = pollfd(fd: descriptor, events: events, revents: 0)
        let result = poll(&entry, 1, deadline.remainingMilliseconds)
        if result == 0 { throw Failure("the session bus did not answer in time") }
        if result < 0, errno != EINTR {
            throw Failure("waiting on the session bus failed (\(String(cString: strerror(errno))))")
        }
    }

    /// One line of the authentication exchange, without its CR LF.
    private func readLine(deadline: Deadline) throws -> String {
        while true {
            if let end = received.indices.dropLast().first(where: { received[$0] == 13 && received[$0 + 1] == 10 }) {
                defer { received.removeSubrange(0..<end + 2) }
                return String(decoding: received[0..<end], as: UTF8.self)
            }
            guard received.count < 512 else { throw Failure("the session bus sent an authentication line too long") }
            try receive(deadline: deadline)
        }
    }

    private func readMessage(deadline: Deadline) throws -> DBusMessage {
        while received.count < 16 { try receive(deadline: deadline) }
        let length: Int
        do {
            length = try DBusMessage.length(ofMessageStartingWith: received[0..<16], maximum: Self.maximumMessageLength)
        } catch let error as DBusWireError {
            throw Failure("the session bus sent a message that cannot be read (\(error))")
        }
        while received.count < length { try receive(deadline: deadline) }
        defer { received.removeSubrange(0..<length) }
        do {
            return try DBusMessage(decoding: Array(received[0..<length]))
        } catch let error as DBusWireError {
            throw Failure("the session bus sent a message that cannot be read (\(error))")
        }
    }

    private func readReply(to serial: UInt32, deadline: Deadline) throws -> DBusMessage {
        while true {
            let message = try readMessage(deadline: deadline)
            if message.replySerial == serial, message.kind == .methodReturn || message.kind == .error { return message }
        }
    }
}

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
