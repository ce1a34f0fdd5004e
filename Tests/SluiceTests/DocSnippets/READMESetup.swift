/// What README.md's blocks use without declaring it.
extension READMESnippets {
    /// What the README's `print` calls wrote, in order, for `readmeSnippetsRun`.
    static let printed = Locked<[String]>([])

    static func print(_ items: Any..., separator: String = " ") {
        printed.append(items.map { "\($0)" }.joined(separator: separator))
    }
}
