/// The seeds' qualified names: AVAudioSession nests its types
/// (`AVAudioSession.Category`, `.Mode`, `.CategoryOptions`, ...), so code
/// ported from them writes `AudioSession.Category` and means the same types
/// as the module's own (`Category`, `Mode`, ...).
extension AudioSession {
    public typealias Category = JackAudioSession.Category
    public typealias Mode = JackAudioSession.Mode
    public typealias CategoryOptions = JackAudioSession.CategoryOptions
    public typealias SetActiveOptions = JackAudioSession.SetActiveOptions
    public typealias RouteChangeReason = JackAudioSession.RouteChangeReason
    public typealias InterruptionType = JackAudioSession.InterruptionType
    public typealias InterruptionOptions = JackAudioSession.InterruptionOptions
    public typealias SilenceSecondaryAudioHintType = JackAudioSession.SilenceSecondaryAudioHintType
    public typealias PortOverride = JackAudioSession.PortOverride
    public typealias RecordPermission = JackAudioSession.RecordPermission
    public typealias ErrorCode = AudioSessionError.Code
    /// `AVAudioSession.Port`: a device's type (`.builtInMic`, `.headphones`, ...).
    public typealias Port = AudioSessionPort
    /// `AVAudioSession.Orientation`, `.Location`, `.PolarPattern`: what a data source says of itself.
    public typealias Orientation = DataSourceOrientation
    public typealias Location = DataSourceLocation
    public typealias PolarPattern = JackAudioSession.PolarPattern
}
