import Dispatch
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import NIOTLS

/// Opens a tunnel through an HTTP CONNECT proxy, then leaves the channel to TLS.
enum ProxyTunnel {
    static func open(on channel: any Channel, to endpoint: Endpoint, proxy: URL, timeout: TimeAmount) async throws {
        let result = OncePromise<Void>()
        let authorization: String? = proxy.user.map { user in
            let credentials = "\(user.removingPercentEncoding ?? user):\(proxy.password?.removingPercentEncoding ?? "")"
            return "Basic \(Data(credentials.utf8).base64EncodedString())"
        }
        try await channel.eventLoop.submit {
            let encoder = HTTPRequestEncoder()
            let decoder = ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes))
            let handler = ProxyConnectHandler(
                target: endpoint.description,
                authorization: authorization,
                result: result,
                encoder: encoder,
                decoder: decoder
            )
            try channel.pipeline.syncOperations.addHandlers([encoder, decoder, handler])
            channel.eventLoop.scheduleTask(in: timeout) {
                if result.complete(.failure(GatewayError.proxyFailed("no answer to CONNECT in time"))) {
                    channel.close(promise: nil)
                }
            }
        }.get()
        try await result.get()
    }
}

final class ProxyConnectHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = Never
    typealias OutboundOut = HTTPClientRequestPart

    private let target: String
    private let authorization: String?
    private let result: OncePromise<Void>
    private let encoder: HTTPRequestEncoder
    private let decoder: ByteToMessageHandler<HTTPResponseDecoder>
    private var status: HTTPResponseStatus?

    init(
        target: String,
        authorization: String?,
        result: OncePromise<Void>,
        encoder: HTTPRequestEncoder,
        decoder: ByteToMessageHandler<HTTPResponseDecoder>
    ) {
        self.target = target
        self.authorization = authorization
        self.result = result
        self.encoder = encoder
        self.decoder = decoder
    }

    func handlerAdded(context: ChannelHandlerContext) {
        var head = HTTPRequestHead(version: .http1_1, method: .CONNECT, uri: target)
        head.headers.add(name: "Host", value: target)
        if let authorization { head.headers.add(name: "Proxy-Authorization", value: authorization) }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = head.status
        case .body:
            break
        case .end:
            guard let status, (200..<300).contains(status.code) else {
                let code = status.map { "\($0.code) \($0.reasonPhrase)" } ?? "no status"
                result.complete(.failure(GatewayError.proxyFailed("it answered CONNECT with \(code)")))
                context.close(promise: nil)
                return
            }
            let pipeline = context.pipeline.syncOperations
            pipeline.removeHandler(encoder, promise: nil)
            pipeline.removeHandler(decoder, promise: nil)
            pipeline.removeHandler(context: context, promise: nil)
            result.complete(.success(()))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        result.complete(.failure(GatewayError.proxyFailed("it closed the connection")))
        context.fireChannelInactive()
    }
}
