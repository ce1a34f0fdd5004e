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
    // `--acknowledge` writes its lines unbuffered: print what is buffered first, to keep the order.
    fflush(nil)
}
// A new folder for each run, so that runs never share (or leave behind) a snapshot unless asked to keep it.
let snapshotDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-demo-\(UUID())")
let summary: DemoSummary
do {
    summary = try runDemo(options, snapshotDirectory: snapshotDirectory)
} catch {
    FileHandle.standardError.write(Data("sluice-demo: \(error)\n".utf8))
    exit(3)
}
if !options.quiet {
    print("Log excerpt (sampled logging middleware and throttled metrics reporter)")
    for line in summary.logExcerpt {
        print("  " + line)
    }
}
print(summary.report)
if options.keepSnapshot {
    print("Snapshot kept in \(snapshotDirectory.path)")
} else if options.dataDirectory == nil {
    try? FileManager.default.removeItem(at: snapshotDirectory)
}
exit(summary.passed ? 0 : 1)
