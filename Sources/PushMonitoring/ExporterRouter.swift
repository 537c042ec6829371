import Foundation
import NIOHTTP1
import NIOPosix
import PushStore

/// The check, run again only when the last one is older than the interval. The check reads the
/// store and may ask the Secret Service (on the libraries' ``BlockingPool``, never the actor's
/// thread); concurrent scrapes share one run.
actor CheckCache {
    let check: StoreCheck
    let interval: Double
    private var last: CheckRun?
    private var running: Task<CheckRun, Never>?

    init(check: StoreCheck, interval: Double) {
        self.check = check
        self.interval = interval
    }

    func current(now: Date = Date()) async -> CheckRun {
        if let last, now.timeIntervalSince(last.date) < interval { return last }
        if let running { return await running.value }
        let task = Task { [check] in await check.run(at: now) }
        running = task
        let run = await task.value
        running = nil
        last = run
        return run
    }
}

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
            let run = await checks.current()
            return ExporterResponse(
                status: .ok,
                contentType: ExporterResponse.metricsType,
                body: CheckMetrics.render(run)
            )
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
            return .text(.notFound, "Not found: the exporter serves /metrics and /probe.")
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
