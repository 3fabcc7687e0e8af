// Parse and validate an Adaptive Card (stdin, JSON) with Microsoft's SDK: prints the card as the
// SDK read it back and every parse and validation event (an unknown element, a bad property).
const AC = require("adaptivecards/dist/adaptivecards.js");
const card = new AC.AdaptiveCard();
const context = new AC.SerializationContext();
card.parse(JSON.parse(require("fs").readFileSync(0, "utf8")), context);
const events = [];
for (let i = 0; i < context.eventCount; i++) events.push(context.getEventAt(i).message);
for (const e of card.validateProperties().validationEvents) events.push(e.message);
process.stdout.write(JSON.stringify({ events, card: card.toJSON() }));
