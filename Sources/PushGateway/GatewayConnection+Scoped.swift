import NIOCore
import NIOPosix

extension GatewayConnection {
    /// Connects, runs `body` with the connection, and closes it whatever `body` did, awaiting the
    /// close before returning or rethrowing: nothing of the connection outlives the call.
    ///
    /// ```swift
    /// let response = try await GatewayConnection.withConnection(configuration) { connection in
    ///     try await connection.send(notification)
    /// }
    /// ```
    public static func withConnection<Result>(
        _ configuration: GatewayConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (GatewayConnection) async throws -> Result
    ) async throws -> Result {
        let connection = GatewayConnection(configuration: configuration, eventLoopGroup: eventLoopGroup)
        return try await connection.closing(isolation: isolation) { connection in
            try await connection.connect()
            return try await body(connection)
        }
    }

    /// Runs `body` with this connection (connected or not: `body` may connect it, and read
    /// ``handshakeReport`` when that fails), then closes it and awaits the close.
    public func closing<Result>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (GatewayConnection) async throws -> Result
    ) async throws -> Result {
        let result: Result
        do {
            result = try await body(self)
        } catch {
            await close()
            throw error
        }
        await close()
        return result
    }
}
