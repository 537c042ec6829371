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

    private let descriptor: Int32
    /// Held to take serials and write a batch of calls, so that batches do not interleave.
    private let writeLock = NSLock()
    private var nextSerial: UInt32 = 1
    /// Guards the replies read and not yet taken, the serials someone waits for, and which
    /// caller reads the socket. Calls from several threads overlap: each writes its calls at
    /// once, one of the waiting callers reads the socket for all of them, and each takes its own
    /// replies (an item's search goes out while the session's key exchange is still awaited).
    private let replies = NSCondition()
    private var answered: [UInt32: DBusMessage] = [:]
    private var awaited: Set<UInt32> = []
    private var someoneReads = false
    /// Read only by the caller that reads the socket (``someoneReads``), or while connecting.
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
    static func shared(timeout: TimeInterval) throws -> SessionBusConnection {
        try sharedLock.withLock {
            if let current, !current.isBroken { return current }
            let connection = try connect(
                addresses: try BusAddress.sessionAddresses(),
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
        let hello = Call(
            destination: "org.freedesktop.DBus",
            path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus",
            member: "Hello",
            arguments: []
        )
        let (serials, helloBytes) = try encode([hello], flags: 0)
        let greeting = [0] + Array("AUTH EXTERNAL \(user)\r\nBEGIN\r\n".utf8)
        do {
            try write(greeting + helloBytes, deadline: deadline)
            let answer = try readLine(deadline: deadline)
            guard answer.hasPrefix("OK ") else {
                throw Failure("the session bus refused EXTERNAL authentication (\(answer.prefix(80)))")
            }
            let reply = try readReply(to: serials[0], deadline: deadline)
            // The answer is the connection's unique name, which nothing here needs.
            guard reply.kind == .methodReturn, case .string? = reply.body.first else {
                throw Failure("the session bus did not answer Hello")
            }
        } catch {
            markBroken()
            throw error
        }
    }

    // MARK: Calls

    /// Sends every call before reading any answer, then reads them all, until `deadline`: the
    /// answers in order, each a method return or an error message. Throws when the connection
    /// fails (and is then broken); a call that cannot be encoded throws before anything is sent
    /// and leaves the connection as it was. Callers on other threads may have calls in flight
    /// at the same time: the answers are matched to their calls by serial.
    func call(_ calls: [Call], deadline: Deadline) throws -> [DBusMessage] {
        let serials: [UInt32] = try writeLock.withLock {
            guard !isBroken else { throw Failure("the connection to the session bus was lost") }
            let (serials, outgoing) = try encode(calls, flags: DBusMessage.noAutoStart)
            // Awaited before they are written: an answer read by another caller is kept for us.
            replies.withLock { awaited.formUnion(serials) }
            do {
                try write(outgoing, deadline: deadline)
            } catch {
                breakConnection(forgetting: serials)
                throw error
            }
            return serials
        }
        return try answers(to: serials, deadline: deadline)
    }

    /// Waits for the answers to `serials`, reading the socket when nobody else is.
    private func answers(to serials: [UInt32], deadline: Deadline) throws -> [DBusMessage] {
        replies.lock()
        defer { replies.unlock() }
        while true {
            if serials.allSatisfy({ answered[$0] != nil }) {
                awaited.subtract(serials)
                return serials.map { answered.removeValue(forKey: $0)! }
            }
            if isBroken {
                forget(serials)
                throw Failure("the connection to the session bus was lost")
            }
            if someoneReads {
                if !replies.wait(until: deadline.date) {
                    forget(serials)
                    markBroken()
                    replies.broadcast()
                    throw Failure("the session bus did not answer in time")
                }
                continue
            }
            someoneReads = true
            replies.unlock()
            let message: DBusMessage
            do {
                message = try readMessage(deadline: deadline)
            } catch {
                replies.lock()
                someoneReads = false
                forget(serials)
                markBroken()
                replies.broadcast()
                throw error
            }
            replies.lock()
            someoneReads = false
            // Signals (NameAcquired) and answers nobody waits for any more are not kept.
            if let serial = message.replySerial, awaited.contains(serial),
                message.kind == .methodReturn || message.kind == .error
            {
                answered[serial] = message
            }
            replies.broadcast()
        }
    }

    /// Drops what was kept for `serials`; called with ``replies`` locked.
    private func forget(_ serials: [UInt32]) {
        awaited.subtract(serials)
        for serial in serials { answered[serial] = nil }
    }

    /// Breaks the connection after a failed write, waking whoever waits.
    private func breakConnection(forgetting serials: [UInt32]) {
        replies.withLock {
            forget(serials)
            markBroken()
            replies.broadcast()
        }
    }

    /// Sends calls that want no answer (NO_REPLY_EXPECTED), without waiting for anything but
    /// the socket.
    func send(_ calls: [Call], deadline: Deadline) throws {
        try writeLock.withLock {
            guard !isBroken else { throw Failure("the connection to the session bus was lost") }
            let (_, outgoing) = try encode(calls, flags: DBusMessage.noAutoStart | DBusMessage.noReplyExpected)
            do {
                try write(outgoing, deadline: deadline)
            } catch {
                breakConnection(forgetting: [])
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
