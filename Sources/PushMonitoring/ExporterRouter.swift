import Foundation
import NIOHTTP1
import NIOPosix
import PushStore

struct ExporterResponse: Sendable {
    var status: HTTPResponseStatus
    var contentType: String
    var body: String
    var headers: [(String, String)] = []

    static let metricsType = "text/plain; version=0.0.4; charset=utf-8"

    static func text(_ status: HTTPResponseStatus, _ message: String) -> ExporterResponse {
        ExporterResponse(status: status, contentType: "text/plain; charset=utf-8", body: message + "\n")
    }
}

/// Which answer a request gets. The `Host` header is not read: every name the exporter is
/// reached by gets the same answers.
struct ExporterRouter: Sendable {
    let checks: CheckCache
    let probes: ProbeService
    let x509: X509Exposition
    let basicAuth: BasicAuth?
    let threadPool: NIOThreadPool

    func respond(method: HTTPMethod, uri: String, authorization: String? = nil) async -> ExporterResponse {
        if let basicAuth {
            // A bcrypt takes tens of milliseconds: on the thread pool, not the event loop.
            let accepted = (try? await threadPool.runIfActive { basicAuth.accepts(authorization) }) ?? false
            guard accepted else {
                var response = ExporterResponse.text(.unauthorized, "Unauthorized: give a user and password.")
                response.headers.append(("WWW-Authenticate", "Basic realm=\"exporter\", charset=\"UTF-8\""))
                return response
            }
        }
        guard method == .GET || method == .HEAD else {
            return .text(.methodNotAllowed, "Only GET is served.")
        }
        guard let components = URLComponents(string: uri) else {
            return .text(.badRequest, "The request's URL cannot be read.")
        }
        switch components.path {
        case "/metrics":
            let (run, source) = await checks.snapshot()
            return ExporterResponse(
                status: .ok,
                contentType: ExporterResponse.metricsType,
                body: CheckMetrics.render(run, x509: x509, source: source)
            )
        // As x509-certificate-exporter serves them, behind the same web configuration.
        case "/healthz":
            return .text(.ok, "ok")
        case "/readyz":
            return await checks.ready
                ? .text(.ok, "ready") : .text(.serviceUnavailable, "syncing: the store was not read yet")
        case "/probe":
            let query = (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }
            do {
                let (result, cached) = try await probes.answer(query)
                return ExporterResponse(
                    status: .ok,
                    contentType: ExporterResponse.metricsType,
                    body: ProbeMetrics.render(result, cached: cached)
                )
            } catch let error as MonitoringError {
                return .text(.badRequest, error.message)
            } catch {
                return .text(.badRequest, UserFacing.describe(error))
            }
        case "/", "":
            return await statusPage()
        default:
            return .text(
                .notFound,
                "Not found: the exporter serves / (its status page), /metrics, /probe, /healthz and /readyz."
            )
        }
    }

    /// The status page: the check `/metrics` serves (run when it is due) and the last probes.
    /// It may not load anything but itself: no script, no other origin, forms only to `/probe`.
    func statusPage() async -> ExporterResponse {
        let run = await checks.current()
        let page = StatusPage.render(store: checks.check.store.path, run: run, probes: await probes.recentResults)
        var response = ExporterResponse(status: .ok, contentType: StatusPage.contentType, body: page)
        response.headers = [
            ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'"),
            ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer"),
            ("Cache-Control", "no-store"),
        ]
        return response
    }
}
