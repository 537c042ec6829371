import NIOCore

extension LocalGateway {
    /// What each device would show after what the gateway delivered so far; nil unless
    /// ``Configuration/display`` is set.
    public var deviceDisplay: DeviceDisplay? { state.withLockedValue { $0.display } }

    /// Streams open at once over time; nil unless ``Configuration/recordsStreamsInFlight``.
    public var streamsInFlight: StreamsInFlight.Report? { state.withLockedValue { $0.streamsInFlight?.report } }

    /// A notification processed and recorded (its line in the log, when there is one): counted
    /// as accepted and handed to the device display, whether or not its answer reaches the client.
    func delivered(_ decision: Decision) {
        state.withLockedValue { state in
            state.statistics.accepted += 1
            if let delivery = decision.delivery { state.display?.deliver(delivery) }
        }
    }

    /// The connection closed: none of its streams are in flight any longer.
    func connectionClosed(_ number: Int) {
        guard configuration.recordsStreamsInFlight else { return }
        let now = NIODeadline.now()
        state.withLockedValue { $0.streamsInFlight?.closed(number, at: now) }
    }

    @discardableResult
    func updateState<T>(_ body: (inout State) -> T) -> T {
        state.withLockedValue { body(&$0) }
    }
}
