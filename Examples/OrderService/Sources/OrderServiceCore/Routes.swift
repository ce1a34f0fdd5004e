import Foundation
public import Hummingbird
import Logging
public import Prometheus

/// The HTTP interface: `POST /orders`, `GET /orders/{id}`, `GET /stats`, `GET /metrics`.
///
/// Every error is answered with a JSON body `{"error": "...", "status": N}` (see ``JSONErrorMiddleware``).
///
/// - Parameters:
///   - backend: Where the orders go.
///   - registry: The Prometheus registry whose metrics `GET /metrics` shows.
///   - maxBodyBytes: The largest `POST /orders` body taken; a larger one is answered 413.
public func makeRouter(
    backend: some OrderBackend,
    registry: PrometheusCollectorRegistry,
    maxBodyBytes: Int = 4_096
) -> Router<BasicRequestContext> {
    let router = Router()
    router.add(middleware: JSONErrorMiddleware())
    router.post("orders") { request, _ -> Response in
        let body = try await request.body.collect(upTo: maxBodyBytes)
        let placeOrder = try OrderRequestBody.decode(body).validated()
        let order: Order
        do throws(BackendError) {
            order = try await backend.place(placeOrder)
        } catch {
            switch error {
            case .shuttingDown: throw APIError(.serviceUnavailable, "the service is shutting down")
            case .journalFailed(let message): throw APIError(.serviceUnavailable, "the journal stopped: \(message)")
            }
        }
        return try jsonResponse(order, status: order.status == .rejected ? .conflict : .created)
    }
    router.get("orders/:id") { _, context -> Response in
        guard let text = context.parameters.get("id"), let id = Int(text) else {
            throw APIError(.badRequest, "the order id must be an integer")
        }
        guard let order = backend.order(id: id) else {
            throw APIError(.notFound, "no order with id \(id)")
        }
        return try jsonResponse(order, status: .ok)
    }
    router.get("stats") { _, _ -> Response in
        try jsonResponse(backend.stats(), status: .ok)
    }
    router.get("metrics") { _, _ -> Response in
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return Response(
            status: .ok,
            headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: buffer))
        )
    }
    return router
}

/// An error answered with a JSON body and its status.
public struct APIError: HTTPResponseError, Sendable {
    /// The HTTP status.
    public var status: HTTPResponse.Status
    /// What went wrong, for the client.
    public var message: String

    /// An error with this status and message.
    public init(_ status: HTTPResponse.Status, _ message: String) {
        self.status = status
        self.message = message
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        try jsonResponse(ErrorBody(error: message, status: status.code), status: status)
    }
}

/// The body of every error answer.
public struct ErrorBody: Codable, Sendable, Equatable {
    /// What went wrong.
    public var error: String
    /// The HTTP status code, repeated.
    public var status: Int
}

/// Answers every error with a JSON ``ErrorBody``: the route's ``APIError``s, Hummingbird's own (an unknown route,
/// a body over the limit) and, as a 500, anything else.
public struct JSONErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The middleware.
    public init() {}

    public func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            return try error.response(from: request, context: context)
        } catch let error as any HTTPResponseError {
            let message =
                switch error.status {
                case .notFound: "no route for \(request.method) \(request.uri.path)"
                case .contentTooLarge: "the body is larger than the limit"
                default: error.status.reasonPhrase
                }
            return try APIError(error.status, message).response(from: request, context: context)
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(error)"])
            return try APIError(.internalServerError, "internal error").response(from: request, context: context)
        }
    }
}

func jsonResponse(_ value: some Encodable, status: HTTPResponse.Status) throws -> Response {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    let data = try encoder.encode(value)
    return Response(
        status: status,
        headers: [.contentType: "application/json"],
        body: ResponseBody(byteBuffer: ByteBuffer(bytes: data))
    )
}

/// The body of `POST /orders`: an unknown field, a missing one or one of the wrong type is a 400; a value out of
/// range is a 422 (`validated()`). A field given twice is not detected: `JSONDecoder` keeps one of its values.
struct OrderRequestBody: Decodable {
    var customer: String
    var sku: String
    var quantity: Int

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case customer, sku, quantity
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let all = try decoder.container(keyedBy: AnyKey.self)
        let unknown = all.allKeys.map(\.stringValue).filter { CodingKeys(stringValue: $0) == nil }.sorted()
        if !unknown.isEmpty {
            throw APIError(
                .badRequest,
                "unknown field\(unknown.count > 1 ? "s" : "") \(unknown.joined(separator: ", "))"
            )
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        customer = try container.decode(String.self, forKey: .customer)
        sku = try container.decode(String.self, forKey: .sku)
        quantity = try container.decode(Int.self, forKey: .quantity)
    }

    static func decode(_ body: ByteBuffer) throws -> OrderRequestBody {
        do {
            return try JSONDecoder().decode(OrderRequestBody.self, from: Data(body.readableBytesView))
        } catch let error as APIError {
            throw error
        } catch let error as DecodingError {
            throw APIError(.badRequest, Self.describe(error))
        }
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context, _ key: (any CodingKey)? = nil) -> String {
            let keys = context.codingPath + (key.map { [$0] } ?? [])
            return keys.map(\.stringValue).joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "missing field \(path(context, key))"
        case .typeMismatch(let type, let context):
            return context.codingPath.isEmpty
                ? "the body must be a JSON object" : "field \(path(context)) must be of type \(type)"
        case .valueNotFound(let type, let context):
            return "field \(path(context)) must be a \(type), not null"
        case .dataCorrupted(let context) where !context.codingPath.isEmpty:
            return "field \(path(context)) has an invalid value"
        case .dataCorrupted(let context):
            // Foundation on Linux reports a number that does not fit its field here too, without the field.
            return "malformed JSON: \(context.debugDescription)"
        @unknown default:
            return "malformed JSON"
        }
    }

    /// The order request, once its values are in range.
    func validated() throws -> PlaceOrder {
        guard (1...PlaceOrder.maxQuantity).contains(quantity) else {
            throw APIError(
                .unprocessableContent,
                "quantity must be between 1 and \(PlaceOrder.maxQuantity), got \(quantity)"
            )
        }
        guard (1...100).contains(customer.count) else {
            throw APIError(.unprocessableContent, "customer must have 1 to 100 characters")
        }
        guard (1...64).contains(sku.count) else {
            throw APIError(.unprocessableContent, "sku must have 1 to 64 characters")
        }
        return PlaceOrder(customer: customer, sku: sku, quantity: quantity)
    }
}
