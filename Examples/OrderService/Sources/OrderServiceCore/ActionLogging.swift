public import Logging
public import Sluice

/// Sluice's logging middleware writing through a swift-log `Logger`, at `level`, with the store's name as metadata.
///
/// Today's form: the middleware hands its sink a formatted line, so the check of the logger's level is made in
/// `include`, before anything is formatted: at the default level (`.info`) an action costs one comparison.
///
/// - Parameters:
///   - logger: Where the lines go.
///   - level: The level of each line; `.debug` by default.
///   - diff: Whether each line lists the fields that the action changed.
public func swiftLogMiddleware<State: Sendable, Action: Sendable>(
    _ logger: Logger,
    level: Logger.Level = .debug,
    diff: Bool = false
) -> Middleware<State, Action> {
    Middlewares.logging(
        diff: diff,
        include: { _ in logger.logLevel <= level },
        sink: { line in logger.log(level: level, "\(line)", metadata: ["sluice.store": "shop"]) }
    )
}
