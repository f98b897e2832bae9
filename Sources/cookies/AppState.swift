import Amber

/// What a cookie seller has sold so far and aims to sell.
@Immutable
struct SellerData: Hashable, Sendable {
    let name: String
    let salesTarget: Int
    let salesToDate: Int
}

/// The whole state of the app: a value, changed only by the pure transitions below.
enum AppState: Hashable, Sendable {
    case loggedIn(SellerData)
    case loggedOut

    /// Logged in as `name` with a target; logging in again while logged in changes nothing.
    func login(name: String, target: Int) -> AppState {
        switch self {
        case .loggedOut: .loggedIn(SellerData(name: name, salesTarget: target, salesToDate: 0))
        case .loggedIn: self
        }
    }

    func logout() -> AppState {
        .loggedOut
    }

    /// `boxes` more sold; nothing changes while logged out.
    func sell(boxes: Int) -> AppState {
        switch self {
        case .loggedIn(let seller): .loggedIn(seller.update(salesToDate: seller.salesToDate + boxes))
        case .loggedOut: self
        }
    }
}

/// What the screen shows, derived from the state and nothing else.
struct StatusViewModel: Equatable {
    let title: String
    let targetText: String
    let soldText: String
    let progressText: String

    init(state: AppState) {
        switch state {
        case .loggedOut:
            title = "Logged out"
            targetText = ""
            soldText = ""
            progressText = ""
        case .loggedIn(let seller):
            title = "Seller: \(seller.name)"
            targetText = "target \(seller.salesTarget) boxes"
            soldText = "sold \(seller.salesToDate)"
            let remaining = seller.salesTarget - seller.salesToDate
            progressText = remaining > 0 ? "\(remaining) to go" : "target reached"
        }
    }

    var line: String {
        [title, targetText, soldText, progressText].filter { !$0.isEmpty }.joined(separator: " | ")
    }
}
