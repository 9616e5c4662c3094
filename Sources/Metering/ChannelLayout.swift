import CLoudness

/// How the metered channels map to loudspeaker positions, which sets their
/// weights in programme loudness (ITU-R BS.1770: surrounds +1.5 dB, LFE not counted).
public enum ChannelLayout: String, Sendable, CaseIterable {
    /// One channel.
    case mono
    /// Left, right.
    case stereo
    /// L, R, C, LFE, Ls, Rs (SMPTE / ITU order).
    case surround51 = "5.1"

    /// Channels the layout has.
    public var channelCount: Int {
        switch self {
        case .mono: 1
        case .stereo: 2
        case .surround51: 6
        }
    }

    /// The layout for `channels` channels when none is named: mono, stereo or
    /// 5.1; for any other count nil (every channel then counts with weight 1).
    public static func standard(forChannels channels: Int) -> ChannelLayout? {
        allCases.first { $0.channelCount == channels }
    }

    /// libebur128's position for each channel.
    var positions: [channel] {
        switch self {
        case .mono: [EBUR128_CENTER]
        case .stereo: [EBUR128_LEFT, EBUR128_RIGHT]
        case .surround51: [EBUR128_LEFT, EBUR128_RIGHT, EBUR128_CENTER, EBUR128_UNUSED, EBUR128_LEFT_SURROUND,
                           EBUR128_RIGHT_SURROUND]
        }
    }
}

extension Optional where Wrapped == ChannelLayout {
    /// Positions for `channels` channels: the layout's, or weight 1 for each
    /// channel when there is no layout.
    func positions(channels: Int) -> [channel] {
        self?.positions ?? Array(repeating: EBUR128_LEFT, count: channels)
    }
}
