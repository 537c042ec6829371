import Foundation
import PushCore
import Testing

@testable import PushStore

#if canImport(Glibc)
import Glibc
#endif

/// The D-Bus wire format read and written by hand: values of every type the reader knows
/// survive a round trip in both byte orders, the bytes of a known message are the
/// specification's, and whatever a broken or hostile peer sends is refused with an error, never
/// read past its end.
struct DBusWireTests {
    static let everyType: [DBusValue] = [
        .byte(0xA5), .boolean(true), .boolean(false), .int16(-2), .uint16(65_000), .int32(-70_000),
        .uint32(4_000_000_000), .int64(Int64.min), .uint64(UInt64.max), .double(-0.125),
        .string("Grüße, \u{1F600}"), .string(""), .objectPath("/org/freedesktop/secrets/session/s1"),
        .objectPath("/"), .signature("a{o(oayays)}"), .bytes([]), .bytes(Array(0...255)),
        .array(element: "s", [.string("a"), .string("bc")]), .array(element: "(yt)", []),
        .array(element: "t", [.uint64(1), .uint64(2)]),
        .stringDictionary(["xdg:schema": "dev.apnsctl.Credential", "alias": "prod", "kind": "tokenKey"]),
        .structure([.byte(1), .uint64(7), .structure([.string("x"), .variant(.bytes([1, 2, 3]))])]),
        .variant(.variant(.int16(5))),
        .array(
            element: "{o(oayays)}",
            [
                .dictEntry(
                    .objectPath("/org/freedesktop/secrets/collection/login/1"),
                    .structure([
                        .objectPath("/org/freedesktop/secrets/session/s2"), .bytes([9, 9]), .bytes([1]),
                        .string("text/plain"),
                    ])
                )
            ]
        ),
    ]

    static func call(_ body: [DBusValue]) -> DBusMessage {
        DBusMessage(
            kind: .methodCall,
            flags: DBusMessage.noAutoStart,
            serial: 7,
            path: "/org/freedesktop/secrets",
            interface: "org.freedesktop.Secret.Service",
            member: "SearchItems",
            destination: "org.freedesktop.secrets",
            body: body
        )
    }

    @Test func everyTypeSurvivesARoundTrip() throws {
        for value in Self.everyType {
            let message = Self.call([.byte(3), value, .uint16(9)])
            #expect(try DBusMessage(decoding: try message.encoded()) == message, "\(value.signature)")
        }
        let all = Self.call(Self.everyType)
        #expect(try DBusMessage(decoding: try all.encoded()) == all)
    }

    /// The big-endian form of a message is read as the little-endian one: a peer may send either.
    @Test func aBigEndianMessageReadsTheSame() throws {
        let bigEndian = Self.bigEndianReply()
        let message = try DBusMessage(decoding: bigEndian)
        #expect(message.kind == .methodReturn)
        #expect(message.replySerial == 2)
        #expect(message.body == [.uint32(0x0102_0304), .string("ok")])
    }

    /// `Hello`, byte for byte as the specification lays out a message: the fixed header, the
    /// fields as an array of (code, variant) structures, padding to 8, no body.
    @Test func helloIsTheSpecificationsBytes() throws {
        let hello = DBusMessage(
            kind: .methodCall,
            serial: 1,
            path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus",
            member: "Hello",
            destination: "org.freedesktop.DBus"
        )
        var expected: [UInt8] = [UInt8(ascii: "l"), 1, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0]
        var fields: [UInt8] = []
        func field(_ code: UInt8, _ type: Character, _ text: String) {
            while fields.count % 8 != 0 { fields.append(0) }
            fields += [code, 1, UInt8(ascii: type.unicodeScalars.first!), 0]
            fields += withUnsafeBytes(of: UInt32(text.utf8.count).littleEndian, Array.init)
            fields += Array(text.utf8) + [0]
        }
        field(1, "o", "/org/freedesktop/DBus")
        field(2, "s", "org.freedesktop.DBus")
        field(3, "s", "Hello")
        field(6, "s", "org.freedesktop.DBus")
        expected += withUnsafeBytes(of: UInt32(fields.count).littleEndian, Array.init)
        expected += fields
        while expected.count % 8 != 0 { expected.append(0) }
        #expect(try hello.encoded() == expected)
    }

    /// Every prefix of a valid message, and every single-byte change of one, is refused or read:
    /// never a crash, never a read past the end.
    @Test func damagedMessagesAreRefusedNotFollowed() throws {
        let valid = try Self.call(Self.everyType).encoded()
        var refusedPrefixes = 0
        for end in 0..<valid.count {
            do {
                _ = try DBusMessage(decoding: Array(valid[0..<end]))
            } catch is DBusWireError {
                refusedPrefixes += 1
            }
        }
        #expect(refusedPrefixes == valid.count)
        var generator = SplitMix64(seed: 42)
        var refused = 0
        for _ in 0..<8_000 {
            var damaged = valid
            for _ in 0..<(1 + Int(generator.next() % 3)) {
                damaged[Int(generator.next() % UInt64(damaged.count))] = UInt8(truncatingIfNeeded: generator.next())
            }
            if (try? DBusMessage(decoding: damaged)) == nil { refused += 1 }
        }
        // Most changes land in a length, a string or padding; some only change a number.
        #expect(refused > 4_000)
    }

    @Test func whatTheSpecificationForbidsIsRefused() throws {
        let reply = try DBusMessage(kind: .methodReturn, serial: 3, replySerial: 2, body: [.boolean(true)]).encoded()
        // The boolean is the body's last four bytes: 2 is not a boolean.
        var notBoolean = reply
        notBoolean[notBoolean.count - 4] = 2
        #expect(throws: DBusWireError.self) { try DBusMessage(decoding: notBoolean) }

        // Padding after the fixed header's fields must be zero.
        let padded = try DBusMessage(kind: .methodReturn, serial: 3, replySerial: 2, body: [.string("a")]).encoded()
        let fieldsEnd = 16 + Int(padded[12])
        #expect(fieldsEnd % 8 != 0)
        var dirtyPadding = padded
        dirtyPadding[fieldsEnd] = 1
        #expect(throws: DBusWireError.self) { try DBusMessage(decoding: dirtyPadding) }

        // A string whose NUL is missing.
        var unterminated = padded
        unterminated[unterminated.count - 1] = UInt8(ascii: "x")
        #expect(throws: DBusWireError.self) { try DBusMessage(decoding: unterminated) }

        // A length beyond what the reader accepts is refused from the first 16 bytes alone.
        var huge = reply
        withUnsafeBytes(of: UInt32(200 << 20).littleEndian) { huge.replaceSubrange(4..<8, with: $0) }
        #expect(throws: DBusWireError.self) {
            try DBusMessage.length(ofMessageStartingWith: huge[0..<16], maximum: 16 << 20)
        }

        // Variants nested past the limit.
        var nested = DBusValue.byte(1)
        for _ in 0..<100 { nested = .variant(nested) }
        let deep = try DBusMessage(kind: .methodReturn, serial: 3, replySerial: 2, body: [nested]).encoded()
        #expect(throws: DBusWireError.self) { try DBusMessage(decoding: deep) }

        // An object path must be one.
        #expect(!DBusReader.isObjectPath("/a//b"))
        #expect(!DBusReader.isObjectPath("/a/"))
        #expect(!DBusReader.isObjectPath("a/b"))
        #expect(!DBusReader.isObjectPath("/a-b"))
        #expect(DBusReader.isObjectPath("/org/freedesktop/secrets/collection/login/12"))

        // Signatures that are not one: unclosed, an empty structure, a container key.
        for bad in ["a", "(", "()", "a{vs}", "a{s}", "(ss", "z"] {
            #expect(throws: DBusWireError.self, "\(bad)") { try DBusSignature.completeTypes(bad) }
        }
        #expect(try DBusSignature.completeTypes("a{o(oayays)}sv") == ["a{o(oayays)}", "s", "v"])
    }

    @Test func busAddresses() throws {
        #expect(BusAddress.parse("unix:path=/run/user/1000/bus") == [BusAddress(socket: .path("/run/user/1000/bus"))])
        #expect(
            BusAddress.parse("unix:abstract=/tmp/dbus-XyZ,guid=0123abcd")
                == [BusAddress(socket: .abstract("/tmp/dbus-XyZ"))]
        )
        #expect(BusAddress.parse("unix:path=/tmp/a%20b%2cc") == [BusAddress(socket: .path("/tmp/a b,c"))])
        #expect(
            BusAddress.parse("tcp:host=localhost,port=1;unix:path=/x;unix:tmpdir=/tmp")
                == [BusAddress(socket: .path("/x"))]
        )
        #expect(BusAddress.parse("unix:path=/x%2").isEmpty)
        #expect(BusAddress.parse("unix:path=/x,abstract=y").isEmpty)
        #expect(BusAddress.parse("unix:path=/x%00y").isEmpty)
        #expect(
            try BusAddress.sessionAddresses(environment: ["XDG_RUNTIME_DIR": "/run/user/5"])
                == [BusAddress(socket: .path("/run/user/5/bus"))]
        )
        #expect(throws: SessionBusConnection.Failure.self) {
            try BusAddress.sessionAddresses(environment: ["DBUS_SESSION_BUS_ADDRESS": "tcp:host=h,port=1"])
        }
        #expect(throws: SessionBusConnection.Failure.self) { try BusAddress.sessionAddresses(environment: [:]) }
    }

    /// A "bus" that takes the connection and then says nothing, or says no, or sends a message
    /// larger than is accepted: each is a clear failure before the deadline, not a hang.
    @Test func aBusThatMisbehavesIsAFailureNotAHang() throws {
        for behaviour in FakeBus.Behaviour.allCases {
            let bus = try FakeBus(behaviour)
            let started = DispatchTime.now()
            let failure = #expect(throws: SessionBusConnection.Failure.self) {
                try SessionBusConnection.connect(addresses: [bus.address], deadline: Deadline(after: 0.5))
            }
            let waited = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
            #expect(waited < 30, "\(behaviour) held the client for \(waited) s")
            let said = failure.map(\.description) ?? ""
            switch behaviour {
            case .silent: #expect(said.contains("did not answer in time"), "\(said)")
            case .rejects: #expect(said.contains("refused EXTERNAL"), "\(said)")
            case .oversized: #expect(said.contains("cannot be read"), "\(said)")
            case .hangsUp: #expect(said.contains("closed the connection"), "\(said)")
            }
        }
    }

    /// Against the real session bus of scripts/with-secret-service: the daemon's own answers
    /// (a name, a list, an error) read as the specification says.
    @Test(
        .enabled(
            if: ProcessInfo.processInfo.environment["APNSCTL_INSIDE_SECRET_SERVICE"] == "1",
            "needs the private session bus of scripts/with-secret-service"
        )
    )
    func theRealBusAnswers() throws {
        let connection = try SessionBusConnection.connect(
            addresses: try BusAddress.sessionAddresses(),
            deadline: Deadline(after: 5)
        )
        let replies = try connection.call(
            [
                .init(
                    destination: "org.freedesktop.DBus",
                    path: "/org/freedesktop/DBus",
                    interface: "org.freedesktop.DBus",
                    member: "ListNames",
                    arguments: []
                ),
                .init(
                    destination: "org.freedesktop.DBus",
                    path: "/org/freedesktop/DBus",
                    interface: "org.freedesktop.DBus",
                    member: "NameHasOwner",
                    arguments: [.string("org.freedesktop.secrets")]
                ),
                .init(
                    destination: "org.example.NobodyOwnsThis",
                    path: "/",
                    interface: "org.example.Nothing",
                    member: "Nothing",
                    arguments: []
                ),
            ],
            deadline: Deadline(after: 5)
        )
        let names = try #require(replies[0].body.first?.elements).compactMap(\.stringValue)
        #expect(names.contains("org.freedesktop.DBus"))
        #expect(names.contains("org.freedesktop.secrets"))
        #expect(replies[1].body == [.boolean(true)])
        #expect(replies[2].kind == .error)
        // Calls go with NO_AUTO_START: a name nobody owns is not started, and the bus says so.
        #expect(replies[2].errorName == "org.freedesktop.DBus.Error.NameHasNoOwner")
        #expect(!connection.isBroken)

        // A call that cannot be written (a NUL inside a string) is refused before anything is
        // sent, and the connection goes on.
        let nameHasOwner = SessionBusConnection.Call(
            destination: "org.freedesktop.DBus",
            path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus",
            member: "NameHasOwner",
            arguments: [.string("org.freedesktop.secrets\u{0}")]
        )
        #expect(throws: DBusWireError.self) { try connection.call([nameHasOwner], deadline: Deadline(after: 5)) }
        #expect(!connection.isBroken)
        var fixed = nameHasOwner
        fixed.arguments = [.string("org.freedesktop.secrets")]
        #expect(try connection.call([fixed], deadline: Deadline(after: 5)).first?.body == [.boolean(true)])
    }

    static func bigEndianReply() -> [UInt8] {
        // REPLY_SERIAL 2, then, at the next multiple of 8, SIGNATURE "us".
        let fields: [UInt8] = [
            5, 1, UInt8(ascii: "u"), 0, 0, 0, 0, 2, 8, 1, UInt8(ascii: "g"), 0, 2, UInt8(ascii: "u"), UInt8(ascii: "s"),
            0,
        ]
        let body: [UInt8] = [1, 2, 3, 4, 0, 0, 0, 2, UInt8(ascii: "o"), UInt8(ascii: "k"), 0]
        var message: [UInt8] = [UInt8(ascii: "B"), 2, 0, 1]
        message += [0, 0, 0, UInt8(body.count)]
        message += [0, 0, 0, 9]  // serial
        message += [0, 0, 0, UInt8(fields.count)]
        message += fields
        while message.count % 8 != 0 { message.append(0) }
        return message + body
    }
}

/// A listening Unix socket that misbehaves as a session bus might: it stands in for a broken
/// bus, which the real daemon cannot be made into.
final class FakeBus: @unchecked Sendable {
    enum Behaviour: CaseIterable {
        case silent
        case rejects
        case oversized
        case hangsUp
    }

    let address: BusAddress
    private let listener: Int32
    private let folder: String
    /// Signalled when the test is done with the bus: until then it keeps its connection open.
    private let finished = DispatchSemaphore(value: 0)

    init(_ behaviour: Behaviour) throws {
        folder = NSTemporaryDirectory() + "apnsctl-fakebus-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/bus"
        address = BusAddress(socket: .path(path))
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var name = sockaddr_un()
        name.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &name.sun_path) { buffer in
            for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &name) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(listener, 4) == 0 else { throw DBusWireError("the fake bus cannot listen") }
        let listening = listener
        let finished = self.finished
        // Whatever it said, the bus holds the connection until the test is done with it (the
        // bound only ends a hung test), so that the client meets the behaviour, not a hang-up.
        let hold: @Sendable () -> Void = { _ = finished.wait(timeout: .now() + 120) }
        Thread.detachNewThread {
            let client = accept(listening, nil, nil)
            guard client >= 0 else { return }
            var scratch = [UInt8](repeating: 0, count: 4096)
            _ = recv(client, &scratch, scratch.count, 0)
            switch behaviour {
            case .silent:
                hold()
            case .rejects:
                _ = send(client, "REJECTED EXTERNAL\r\n", 19, Int32(MSG_NOSIGNAL))
                hold()
            case .oversized:
                var answer = Array("OK 0123456789abcdef0123456789abcdef\r\n".utf8)
                answer += [UInt8(ascii: "l"), 2, 0, 1, 0, 0, 0, 0x10, 1, 0, 0, 0, 0, 0, 0, 0]
                _ = send(client, answer, answer.count, Int32(MSG_NOSIGNAL))
                hold()
            case .hangsUp:
                break
            }
            close(client)
        }
    }

    deinit {
        finished.signal()
        close(listener)
        try? FileManager.default.removeItem(atPath: folder)
    }
}
