/// A failed system call, with the `errno` it left behind.
///
/// The description reads like the C library's own diagnostics, e.g. `bind: Address already in use`.
public struct SocketError: Error, CustomStringConvertible, Equatable {
    public let operation: String
    public let errno: Int32

    public var description: String {
        "\(operation): \(SocketOps.errorDescription(errno))"
    }
}
