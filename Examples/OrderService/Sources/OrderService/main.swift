import Logging
import OrderServiceCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// `swift run -c release OrderService --port 8080`: see README.md.

let options: ServiceOptions
do {
    options = try ServiceOptions(arguments: CommandLine.arguments.dropFirst())
} catch {
    if let message = error.message {
        fputs("OrderService: \(message)\n\(ServiceOptions.usage)\n", stderr)
        exit(2)
    }
    print(ServiceOptions.usage)
    exit(0)
}

var logger = Logger(label: "OrderService")
logger.logLevel = options.logLevel
logger[metadataKey: "backend"] = "\(options.backend.rawValue)"

do {
    let app = try makeOrderService(options: options, logger: logger) { port in
        // The line that scripts and tests wait for.
        print("OrderService listening on \(options.host):\(port) backend=\(options.backend.rawValue)")
        fflush(stdout)
    }
    try await app.runService()
} catch {
    logger.critical("stopped", metadata: ["error": "\(error)"])
    exit(1)
}
