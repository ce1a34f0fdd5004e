import Foundation
import Hummingbird
import Logging
import OrderServiceCore

// `swift run -c release OrderService --port 8080`: see README.md.

let options: ServiceOptions
do {
    options = try ServiceOptions(arguments: CommandLine.arguments.dropFirst())
} catch {
    guard let message = error.message else {
        print(ServiceOptions.usage)
        exit(0)
    }
    FileHandle.standardError.write(Data("OrderService: \(message)\n\(ServiceOptions.usage)\n".utf8))
    exit(2)
}

var logger = Logger(label: "OrderService")
logger.logLevel = options.logLevel
logger[metadataKey: "backend"] = "\(options.backend.rawValue)"

do {
    let app = try makeOrderService(options: options, logger: logger) { port in
        // The line that scripts and tests wait for; written unbuffered, so that a pipe sees it at once.
        let line = "OrderService listening on \(options.host):\(port) backend=\(options.backend.rawValue)\n"
        FileHandle.standardOutput.write(Data(line.utf8))
    }
    try await app.runService()
} catch {
    logger.critical("stopped", metadata: ["error": "\(error)"])
    exit(1)
}
