import Foundation
import SluiceDemoKit

let options: DemoOptions
do {
    options = try DemoOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("sluice-demo: \(error)\n\n\(DemoOptions.usage)\n".utf8))
    exit(2)
}
if options.help {
    print(DemoOptions.usage)
    exit(0)
}

if !options.quiet {
    print("sluice-demo: \(options.orders) orders from \(options.producers) producer threads")
}
let summary = runDemo(options)
if !options.quiet {
    print("Log excerpt (sampled logging middleware and throttled metrics reporter)")
    for line in summary.logExcerpt {
        print("  " + line)
    }
}
print(summary.report)
exit(summary.passed ? 0 : 1)
