import NIOCore
import NIOHTTP2

/// The local gateway's one fault that loses an answer (`--drop-after N`): a notification is
/// processed and recorded, then its connection is cut before the answer goes out.
extension GatewayStreams {
    /// Cuts the connection instead of answering `decision` when the fault is due now; whether it did.
    func dropsAnswer(to decision: Decision, context: ChannelHandlerContext) -> Bool {
        guard let limit = gateway.configuration.faults.dropAfterAccepted, decision.record != nil,
            gateway.takeDrop(atAccepted: limit)
        else { return false }
        // Processed and recorded, then the connection is cut before the answer goes out:
        // the client cannot know it was delivered. Answers already written still leave, and
        // nothing more is processed on this connection, so this is the only answer lost.
        var record = decision.record ?? [:]
        record["connection"] = number
        record["answer_dropped"] = true
        let logged = gateway.log(record, on: context.eventLoop)
        gateway.delivered(decision)
        gateway.updateStatistics { $0.answersDropped.append(decision.apnsID) }
        state.answerCut()
        let channel = context.channel
        channel.flush()
        // The cut waits for the line, so the log holds what the client never heard about.
        (logged ?? context.eventLoop.makeSucceededFuture(true)).whenComplete { _ in
            channel.eventLoop.scheduleTask(in: .milliseconds(50)) { channel.close(promise: nil) }
        }
        return true
    }
}
