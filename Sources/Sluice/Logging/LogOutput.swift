import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

extension Middlewares {
    /// Writes `line` and a newline to standard error in one `write` call.
    ///
    /// One call per line keeps lines from concurrent threads whole (a pipe writes up to `PIPE_BUF` bytes, at
    /// least 512, atomically; a terminal or a file opened for appending writes each call whole). A short write
    /// is completed with further calls.
    public static func writeToStandardError(_ line: String) {
        writeLine(line, toFileDescriptor: 2)
    }

    /// Writes `line` and a newline to standard output in one `write` call, like ``writeToStandardError(_:)``.
    ///
    /// This bypasses the buffer of `print`: mixing both on standard output can reorder lines.
    public static func writeToStandardOutput(_ line: String) {
        writeLine(line, toFileDescriptor: 1)
    }

    /// Writes `line` and a newline to a file descriptor with one `write` call (more only after a short write).
    package static func writeLine(_ line: String, toFileDescriptor descriptor: Int32) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return  // A logger must not bring the service down: the line is lost.
                }
                offset += written
            }
        }
    }
}
