// Every string the kiosk shows, in one place, so that it can be translated.
// Functions build the strings that carry a value.

export const STRINGS = {
  title: "wordjudge kiosk",
  demo: "DEMO",
  demoNote: "not an official lexicon",
  // A lexicon named like an edition (CSW24...) that its words are not: served only because the TD forced it.
  unverified: (claim) => (claim.verdict === "unknown_edition"
    ? `UNVERIFIED: ${claim.claimed} is not a known edition`
    : claim.any_edition ? `UNVERIFIED: not an official ${claim.claimed} edition` : `UNVERIFIED: not the official ${claim.claimed}`),
  words: (n) => (n === 1 ? "1 word" : `${n} words`),
  wordCount: (n) => `${n.toLocaleString("en")} words`,
  fingerprint: (short) => `fingerprint ${short}`,
  serverOk: "Server connected",
  serverDown: "Cannot reach the adjudication server: call the TD",
  serverProblem: "Server problem: call the TD",

  // idle
  start: "Start a challenge",
  startHint: "Both players cover their racks. The challenger types the words.",
  pickDivision: "Challenger: choose your division",
  tdButton: "TD",

  // challenger
  challengerTitle: "Challenger: type the challenged words",
  table: "Table",
  round: "Round",
  wordsLabel: "Words (separate them with spaces, commas or new lines)",
  noWordsYet: "No words yet",
  refusedChar: (ch, lexicon) => `“${ch}” is not a letter of ${lexicon}`,
  tooManyWords: (max) => `A challenge has at most ${max} words`,
  tooLong: (max) => `A word has at most ${max} letters`,
  tooShort: (min) => `Each word needs at least ${min} letters`,
  needTable: "Type the table number",
  tableRule: "A table number is 1 to 10 letters or digits",
  roundRule: "A round is a number from 1 to 999",
  needRound: "Type the round number",
  needWords: "Type at least one word",
  done: "Done: hand over to the opponent",
  cancel: "Cancel",

  // opponent
  opponentTitle: "Opponent: check the words",
  opponentHint: "If a word is not exactly what is on the board, press Back.",
  tableRound: (table, round) => (round ? `Table ${table}, round ${round}` : `Table ${table}`),
  repeated: (word, n) => `${word} is typed ${n} times`,
  hold: "Opponent: press and hold to adjudicate",
  holdKeys: "(or hold Space on this button)",
  back: "Back",
  sending: "Adjudicating…",

  // verdict
  acceptable: "ACCEPTABLE",
  unacceptable: "UNACCEPTABLE",
  acceptableIcon: "✓",
  unacceptableIcon: "✗",
  verdictLine: (n, table, round) =>
    [n === 1 ? "1 word" : `${n} words together`, `table ${table}`, round ? `round ${round}` : ""].filter(Boolean).join(" · "),
  challengeId: (id, time) => `Challenge #${id} · ${time}`,
  replayed: "(this challenge was already adjudicated: same result)",
  clearsIn: (s) => `Clears in ${s} s, or press any key`,

  // failures
  failedTitle: "No verdict",
  unreachable: "Cannot reach the adjudication server: call the TD",
  serverRefused: (message) => `The server refused: ${message}`,
  retry: "Try again",
  retryNote: "Trying again sends the same challenge: it is never recorded twice. If you leave it, the kiosk asks "
    + "the server what became of it before the next challenge starts.",
  settling: "Checking the last challenge with the server…",
  unsettledTitle: "The last challenge is not settled",
  unsettled: (table, round) => `The last challenge (table ${table}${round ? `, round ${round}` : ""}) got no clear `
    + "answer, and the server cannot say yet whether it was recorded. Try again, or call the TD.",
  settledNote: (table, round) => `The last challenge (table ${table}${round ? `, round ${round}` : ""}) got no clear `
    + "answer at the time. It was recorded: this is its verdict.",
  discard: "Leave it for now",

  // enrolment and settings
  pairTitle: "This kiosk is not enrolled",
  pairHint: "The TD gives a pairing code (wordjudge device pair, or the TD console).",
  pairCode: "Pairing code",
  pair: "Enrol this kiosk",
  revoked: "This kiosk is not enrolled or was revoked: call the TD",
  moved: "This device's network address changed: call the TD",
  otherServer: (event) => `This is not the server this device was enrolled with${event ? ` (event ${event})` : ""}: `
    + "call the TD",
  otherServerHint: "The device keeps its enrolment and tries again: it carries on by itself once its own server is back.",
  tdTitle: "TD settings",
  tdName: "TD name",
  tdPassword: "Password",
  tdUnlock: "Open settings",
  settingsDivision: "Division served by this kiosk",
  allDivisions: "Every division (the challenger chooses)",
  enrolledFor: (division) => `Enrolled for division ${division} by the TD`,
  enrolledAs: (name) => `This kiosk is enrolled as ${name}`,
  openedBy: (td) => `Settings opened by TD ${td}`,
  unpair: "Forget this kiosk's enrolment",
  close: "Close",

  // runner's handheld
  runnerPairTitle: "This handheld is not enrolled",
  runnerTitle: (name) => `Signed in as ${name}`,
  runnerPair: "Enrol this handheld",
  runnerRevoked: "This handheld is not enrolled or was revoked: call the TD",
  division: "Division",
  checkAndSend: "Check the slip",
  confirmTitle: "Check against the slip",
  send: "Send for adjudication",
  edit: "Edit",
  next: "Next challenge",
  notSent: "Not sent: no answer from the server",
  notSentNote: "No verdict yet. Try again when the connection is back: the same challenge is never recorded twice.",
  recent: "Your recent challenges",
  noRecent: "None yet",
  recentLine: (id, table, n, time) => `#${id} · table ${table} · ${n === 1 ? "1 word" : `${n} words`} · ${time}`,
  printDocket: "Print docket",

  // docket
  docketTitle: "Challenge docket",
  docketSize: "Paper",
  docketPrint: "Print",
  docketFacts: {
    event: "Event", division: "Division", round: "Round", table: "Table", words: "Words", verdict: "Verdict",
    consequence: "Consequence", lexicon: "Lexicon", time: "Time", id: "Challenge", head: "Chain",
  },

  // TD console
  console: {
    title: "wordjudge TD console",
    signIn: "Sign in",
    signInTitle: "TD console: sign in",
    signOut: "Sign out",
    signedInAs: (name) => `TD ${name}`,
    tabs: { overview: "Overview", feed: "Live feed", devices: "Devices and accounts", event: "Event settings", summary: "Summary" },
    divisions: "Divisions",
    serverId: (id) => `Server identity ${id} (this data folder's; devices enrolled here belong to it)`,
    columns: {
      division: "Division", lexicon: "Lexicon", edition: "Edition", fingerprint: "Fingerprint", rule: "Rule",
      name: "Name", role: "Role", address: "Address", lastSeen: "Last seen", state: "State", id: "#", time: "Time", round: "Round",
      table: "Table", actor: "By", words: "Words", verdict: "Verdict", results: "Per-word (TD only)", kind: "Kind",
      challenges: "Challenges", acceptable: "Acceptable", share: "Share acceptable", added: "Added", by: "By",
    },
    online: "online", offline: "offline", revoked: "revoked", never: "never", anyDivision: "any",
    revoke: "Revoke", revokeConfirm: (name) => `Revoke ${name}? Its next request will fail.`,
    alerts: "Alerts", noAlerts: "No alerts", times: (n) => `${n} times`, lastAt: (t) => `last ${t}`,
    notUsed: "not used yet", refusedFrom: (address, at) => `· refused from ${address} (${at})`,
    acceptMove: "Accept move",
    acceptMoveConfirm: (name, from, to) => `Let ${name}'s token work from ${to} instead of ${from}? `
      + "Only if you know the device moved (a new cable or Wi-Fi address); if not, revoke it.",
    verify: "Verify the audit chain", chainHead: (head) => `Chain head: ${head.text}`,
    filters: "Filters", apply: "Apply", anyVerdict: "any verdict", device: "Device or TD", since: "From", until: "Until",
    exportCsv: "Export CSV", exportJsonl: "Export JSONL", live: "Live: new adjudications appear at the top",
    liveLost: "Live feed interrupted: reconnecting…", noRecords: "No records match",
    record: (id) => `Record #${id}`, close: "Close", parent: "Of record", children: "Linked records",
    needsRuling: "The re-check disagrees: a TD ruling is needed", chain: "Chain position",
    recheck: "Re-check (same words)", note: "Note", reissue: "Reissue with corrected words", reason: "Reason",
    ruling: "Record a ruling", rulingVerdict: "Final verdict", done: (kind, id) => `${kind} recorded as #${id}`,
    pairing: "Enrol a device", pairingRole: "Role", pairingName: "Name (optional)", createCode: "Create a pairing code",
    code: (code, until) => `Code ${code}, valid until ${until}`,
    accounts: "TD accounts", addTd: "Add a TD", password: "Password (10+ characters)", disable: "Disable",
    eventSaved: "Event saved and served", addDivision: "Add a division", removeDivision: "Remove",
    rounds: "Challenges carry a round number", perMinute: "Challenges per minute per device (0: no limit)",
    resultSeconds: "Kiosk shows a verdict for (seconds)", save: "Save and serve",
    currentRound: "Current round", setRound: "Set",
    roundSet: (round) => `Round ${round} is the current round: kiosks and handhelds pre-fill it in new challenges`,
    roundCleared: "No current round: kiosks and handhelds leave the round empty",
    mostChallenged: "Most challenged words", total: "Whole event",
  },
};
