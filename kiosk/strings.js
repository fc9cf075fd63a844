// Every string the kiosk shows, in one place, so that it can be translated.
// Functions build the strings that carry a value.

export const STRINGS = {
  title: "wordjudge kiosk",
  demo: "DEMO",
  demoNote: "not an official lexicon",
  words: (n) => (n === 1 ? "1 word" : `${n} words`),
  wordCount: (n) => `${n.toLocaleString("en")} words`,
  fingerprint: (short) => `fingerprint ${short}`,
  serverOk: "Server connected",
  serverDown: "Cannot reach the adjudication server: call the TD",

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
  retryNote: "Trying again sends the same challenge: it is never recorded twice.",
  discard: "Cancel this challenge",

  // enrolment and settings
  pairTitle: "This kiosk is not enrolled",
  pairHint: "The TD gives a pairing code (wordjudge device pair, or the TD console).",
  pairCode: "Pairing code",
  pair: "Enrol this kiosk",
  revoked: "This kiosk is not enrolled or was revoked: call the TD",
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
};
