/// Stops the program because the calling code used Sluice wrongly, saying what was wrong in every build
/// configuration.
///
/// `precondition` and `preconditionFailure` drop their message in optimized builds: a release build that passed
/// `throttle` a negative interval stopped with "Illegal instruction" and no text at all. `fatalError` keeps its
/// message in debug and release builds alike, so every usage error that the documentation says "stops the program
/// with a message" goes through here. Only `-Ounchecked` builds, which remove such checks by design, stop silently.
///
/// - Parameters:
///   - message: What was wrong, naming the API and the value it got, e.g.
///     `Middlewares.throttle: the interval must not be negative, got milliseconds(-1).`
///   - file: The caller's file, for the message's location.
///   - line: The caller's line.
@usableFromInline
package func usageError(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    fatalError("Sluice usage error: \(message)", file: file, line: line)
}
