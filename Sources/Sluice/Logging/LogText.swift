/// Makes text safe to put on a log line: every line the logging middleware writes is one line.
enum LogText {
    /// Whether `scalar` is written as an escape: the control characters (`\n`, `\r`, `\t`, escape, NEL, all of
    /// Unicode's category Cc) and the line and paragraph separators, which would otherwise break the line or drive
    /// the terminal.
    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: true
        default: false
        }
    }

    /// Whether UTF-8 `bytes` may hold a character to escape: those characters are encoded with these leading bytes
    /// only (a `false` is sure; a `true` is then checked character by character).
    static func mayNeedEscape(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        for byte in bytes where byte < 0x20 || byte == 0x7F || byte == 0xC2 || byte == 0xE2 {
            return true
        }
        return false
    }

    /// `text` with its control characters written as escapes: `\n`, `\r`, `\t`, `\0`, `\u{1B}`.
    static func escapingControlCharacters(_ text: some StringProtocol) -> String {
        // Cheap check first: the characters to escape are encoded with these leading bytes only.
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 }) else {
            return String(text)
        }
        var result = ""
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) {
                appendEscape(of: scalar, to: &result)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// `text` in double quotes, with `"`, `\` and control characters escaped; of a longer text, only its first
    /// `limit` characters are read, and the closing quote is left out.
    static func quoted(_ text: some StringProtocol, limit: Int) -> String {
        let head = text.prefix(limit)
        var result = "\""
        for scalar in head.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case _ where needsEscape(scalar): appendEscape(of: scalar, to: &result)
            default: result.unicodeScalars.append(scalar)
            }
        }
        if head.endIndex == text.endIndex {
            result += "\""
        }
        return result
    }

    private static func appendEscape(of scalar: Unicode.Scalar, to text: inout String) {
        switch scalar {
        case "\n": text += "\\n"
        case "\r": text += "\\r"
        case "\t": text += "\\t"
        case "\0": text += "\\0"
        default: text += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        }
    }

    /// `limit + 1` without overflow: how much of a text to read to know whether it is longer than `limit`.
    static func plusOne(_ limit: Int) -> Int {
        limit == .max ? limit : limit + 1
    }
}
