// The swift-log recipe of the DocC article "Logging and Metrics in a Service" (LoggingAndMetrics.md), verbatim but
// for `records:` named instead of a trailing closure (swift-format's OnlyOneTrailingClosureArgument):
// the article's block is not compiled in the library's tests, so it is compiled here. The service logs through it.

import Logging
import Sluice

extension Logger.Level {
    /// The swift-log level of a Sluice log record.
    init(_ level: Middlewares.LogLevel) {
        switch level {
        case .trace: self = .trace
        case .debug: self = .debug
        case .info: self = .info
        case .notice: self = .notice
        case .warning: self = .warning
        case .error: self = .error
        case .critical: self = .critical
        }
    }
}

extension Middlewares {
    /// The logging middleware writing to a swift-log `Logger`: the action as the message, the rest as metadata.
    static func logging<State: Sendable, Action: Sendable>(
        to logger: Logger,
        level: LogLevel = .debug,
        diff: Bool = false,
        sampling: LogSampling = .all
    ) -> Middleware<State, Action> {
        logging(
            level: level,
            diff: diff,
            sampling: sampling,
            isEnabled: { level in logger.logLevel <= Logger.Level(level) },
            records: { record in
                var metadata: Logger.Metadata = ["duration": "\(record.durationText)"]
                if record.waited > .zero {
                    metadata["waited"] = "\(record.waitedText)"
                }
                if let changes = record.changes {
                    metadata["changes"] = .array(changes.map { .string($0.description) })
                }
                logger.log(level: Logger.Level(record.level), "\(record.actionDescription)", metadata: metadata)
            }
        )
    }
}
