"""The facts behind the demo's evaluation set, written for ragmetrics (not taken from anywhere).

Each conversation fact has a question, the turn that answers it (decisive), a later turn
that confirms or updates it (highly relevant), a turn on the same topic that does not answer
(partial) and a misleading turn about someone else (distractor). Handbook facts have the
same four parts for a fictional company's policy pages.
"""

from __future__ import annotations

# (key, question, decisive user turn, supporting turn, partial turn, distractor turn)
CONVERSATION = [
    (
        "dog",
        "What is the name of Maya's dog?",
        "We finally adopted the beagle from the shelter, we named him Biscuit.",
        "Biscuit chewed through the garden hose again this morning.",
        "I keep reading about which dog breeds are good with small apartments.",
        "My neighbour's dog Rocket barks every night at nine.",
    ),
    (
        "city",
        "Which city did Maya move to for her new job?",
        "The movers come on Friday, I am officially relocating to Rotterdam.",
        "Rotterdam is so windy, I bought a proper raincoat at the harbour market.",
        "Moving boxes are everywhere and I still have not labelled any of them.",
        "My cousin moved to Antwerp last year and loves it.",
    ),
    (
        "job",
        "What is Maya's new job title?",
        "I signed the contract today: I am the new logistics planner at Hafenwerk.",
        "Second week as logistics planner and I already rebuilt the shipping calendar.",
        "Job interviews make me nervous, I always talk too fast.",
        "My brother just became a junior accountant at a bakery chain.",
    ),
    (
        "allergy",
        "What is Maya allergic to?",
        "The doctor confirmed it: I am allergic to hazelnuts, so no more praline.",
        "I checked the cake label twice because of the hazelnut thing.",
        "Spring pollen makes my eyes itch but that is just seasonal.",
        "My colleague cannot eat shellfish, he swells up immediately.",
    ),
    (
        "marathon",
        "Which race is Maya training for?",
        "I registered for the Leiden half marathon in May, training starts now.",
        "Long run today, eighteen kilometres, the Leiden race feels possible.",
        "New running shoes hurt a bit for the first few kilometres.",
        "My friend Tom is doing a triathlon in Nice.",
    ),
    (
        "instrument",
        "Which instrument is Maya learning?",
        "I started cello lessons on Tuesday evenings with a teacher called Ines.",
        "Ines says my bow grip on the cello is finally relaxed.",
        "I listened to a string quartet concert on the radio last night.",
        "My niece plays the trumpet very loudly.",
    ),
    (
        "car",
        "What car did Maya buy?",
        "We bought a used green Skoda Octavia estate, perfect for the dog.",
        "The Skoda needed new wiper blades but otherwise runs well.",
        "Car insurance quotes are confusing, every site asks different questions.",
        "Our old neighbours drive a red Fiat Panda.",
    ),
    (
        "book",
        "Which book is Maya reading for her book club?",
        "Book club picked The Salt Path for this month, I am halfway through.",
        "Finished The Salt Path, the ending made me cry on the tram.",
        "I prefer paper books to e-readers for some reason.",
        "My mother is reading a thriller about a lighthouse keeper.",
    ),
    (
        "birthday",
        "When is Maya's sister's birthday?",
        "My sister Lena turns thirty on the twelfth of August, we are planning a surprise.",
        "Booked a boat for Lena's birthday on August twelfth.",
        "Birthday gifts are hard, I never know what to buy.",
        "My boss celebrates his birthday in January with too much cake.",
    ),
    (
        "plant",
        "What plant did Maya get for her balcony?",
        "I bought a lemon tree for the balcony, it even has two tiny lemons.",
        "The lemon tree lost some leaves after the cold night.",
        "Balcony gardening seems easy in videos but the wind is brutal.",
        "The office has a huge fiddle leaf fig nobody waters.",
    ),
    (
        "language",
        "Which language is Maya studying?",
        "I enrolled in a Dutch course, level A2, twice a week.",
        "Passed the A2 Dutch exam, on to B1 after summer.",
        "Language apps are fun but I forget words quickly.",
        "My roommate is learning Japanese for a trip.",
    ),
    (
        "recipe",
        "What dish did Maya cook for the dinner party?",
        "For the dinner party I made a mushroom risotto with thyme.",
        "Everyone asked for the risotto recipe after the party.",
        "Dinner parties stress me out, too many dishes at once.",
        "My dad always grills sausages when guests come over.",
    ),
    (
        "holiday",
        "Where is Maya going on holiday?",
        "We booked ten days in the Azores for September, hiking and whales.",
        "Packing for the Azores, the forecast says rain and sun every day.",
        "I need a holiday, the last months were intense.",
        "Colleagues keep recommending Crete for a beach holiday.",
    ),
    (
        "bike",
        "What happened to Maya's bike?",
        "My bike was stolen outside the station even though it was locked.",
        "Bought a second-hand bike to replace the stolen one, with two locks this time.",
        "Cycling in the rain is something I am still getting used to.",
        "A tourist crashed his rental bike into a canal yesterday.",
    ),
    (
        "coffee",
        "How does Maya take her coffee?",
        "I switched to oat milk flat whites, no sugar.",
        "The café near the office finally stocks oat milk for my flat white.",
        "Coffee prices went up again this month.",
        "My manager drinks espresso with three sugars.",
    ),
    (
        "volunteer",
        "Where does Maya volunteer?",
        "I started volunteering at the food bank on Saturday mornings.",
        "The food bank shift was busy, we packed two hundred boxes.",
        "I wanted to do something useful on weekends.",
        "My friend volunteers at an animal shelter in Utrecht.",
    ),
]

HANDBOOK = [
    (
        "travel",
        "What is the daily meal allowance on business trips?",
        "Employees travelling on business receive a meal allowance of 45 euros per day, paid with the monthly salary.",
        "FAQ: the 45 euro meal allowance also applies to training days away from the office.",
        "Business trips must be approved by a team lead before booking.",
        "Archived 2019 policy: the daily meal allowance was 30 euros.",
    ),
    (
        "vacation",
        "How many vacation days do full-time employees get?",
        "Full-time employees are entitled to 27 vacation days per calendar year.",
        "FAQ: part-time staff receive vacation days pro rata, based on the 27-day full-time entitlement.",
        "Vacation requests should be submitted through the HR portal.",
        "Archived 2018 policy: full-time employees received 24 vacation days.",
    ),
    (
        "remote",
        "How many days a week may employees work remotely?",
        "Employees may work remotely up to three days per week in agreement with their team.",
        "FAQ: remote days cannot be saved up; the three-day limit applies each week.",
        "Remote work requires a secure home network and a company laptop.",
        "Archived pandemic rule: remote work was mandatory five days a week.",
    ),
    (
        "laptop",
        "How often are company laptops replaced?",
        "Company laptops are replaced every four years, or earlier after a hardware failure.",
        "FAQ: a laptop older than four years can be swapped at the IT desk without a ticket.",
        "Laptops must be locked when left unattended.",
        "Archived IT plan: laptops were replaced every three years.",
    ),
    (
        "parental",
        "How long is paid parental leave?",
        "Parents receive 16 weeks of fully paid parental leave within the first year.",
        "FAQ: the 16 weeks may be split into blocks of at least two weeks.",
        "Parental leave must be announced to HR two months in advance.",
        "Archived policy: paid parental leave was 10 weeks.",
    ),
    (
        "training",
        "What is the yearly training budget per employee?",
        "Each employee has a training budget of 1,500 euros per year for courses and conferences.",
        "FAQ: unused training budget does not roll over; the 1,500 euros reset every January.",
        "Training requests are discussed in the yearly development talk.",
        "Archived policy: the training budget was 800 euros.",
    ),
    (
        "bike",
        "Does the company reimburse bicycle commuting?",
        "Employees who cycle to work receive 0.23 euros per kilometre, up to 25 kilometres each way.",
        "FAQ: e-bikes qualify for the same 0.23 euro per kilometre bicycle allowance.",
        "Secure bicycle parking is available in the basement.",
        "Archived policy: only public transport tickets were reimbursed.",
    ),
    (
        "security",
        "How often must passwords be changed?",
        "Passwords no longer expire; they must be changed only after a suspected compromise.",
        "FAQ: use the password manager and enable two-factor authentication instead of rotating passwords.",
        "Phishing simulations are run every quarter.",
        "Archived policy: passwords had to be changed every 90 days.",
    ),
    (
        "expenses",
        "How soon must expense claims be submitted?",
        "Expense claims must be submitted within 60 days of the purchase, with the receipt.",
        "FAQ: claims older than 60 days need a manager's written approval.",
        "Receipts can be photographed with the expenses app.",
        "Archived policy: claims were accepted up to one year later.",
    ),
    (
        "overtime",
        "How is overtime compensated?",
        "Overtime is compensated with time off at 1.5 hours per extra hour worked.",
        "FAQ: overtime time off must be taken within six months.",
        "Overtime should be the exception and discussed with the team lead.",
        "Archived policy: overtime was paid out in cash at the normal rate.",
    ),
    (
        "sick",
        "When must employees report sick?",
        "Report sick to your team lead before 9:00 on the first day of absence.",
        "FAQ: after the 9:00 sick report, HR contacts you on the third day if you are still ill.",
        "Health insurance questions go to the HR service desk.",
        "Archived rule: sickness had to be reported by noon.",
    ),
    (
        "equipment",
        "Can employees get a budget for home office equipment?",
        "A one-time home office budget of 400 euros covers a chair, desk or screen.",
        "FAQ: the 400 euro home office budget can be claimed once every five years.",
        "Home office setups should follow the ergonomics checklist.",
        "Archived policy: no home equipment was provided.",
    ),
    (
        "pension",
        "How much does the company contribute to the pension?",
        "The company contributes 8 percent of the gross salary to the pension plan.",
        "FAQ: employees may add up to 5 percent on top of the company's 8 percent pension contribution.",
        "Pension statements are sent every spring.",
        "Archived plan: the company contributed 6 percent.",
    ),
    (
        "anniversary",
        "What do employees receive at their 10-year anniversary?",
        "At ten years of service employees receive an extra week of paid leave and a dinner voucher.",
        "FAQ: the ten-year extra week of leave must be used within the anniversary year.",
        "Anniversaries are announced in the monthly newsletter.",
        "Archived custom: a watch was given after 25 years.",
    ),
]

# Uneven evidence, so that rarity weighting matters: what each profile adds to a fact's four
# turns (grade, turn). A fact not named here keeps the even 5, 4, 3, 1.
#
# - "many confirmations": one answering turn and many that confirm it (4s are common, so
#   each 4 weighs little beside the one 5);
# - "several answers": the answer is said more than once (5s are common, so 4s and 3s weigh
#   up to their caps);
# - "needle": one answering turn among many on the same topic (3s are common, each weighs
#   little) and no confirming turn.
PROFILE = {
    "dog": "many confirmations",
    "city": "many confirmations",
    "job": "many confirmations",
    "marathon": "many confirmations",
    "instrument": "many confirmations",
    "language": "several answers",
    "car": "several answers",
    "holiday": "several answers",
    "allergy": "needle",
    "book": "needle",
    "birthday": "needle",
    "coffee": "needle",
}
EXTRA_TURNS: dict[str, list[tuple[int, str]]] = {
    "dog": [
        (4, "Took Biscuit to the vet for his shots, the beagle was very brave."),
        (4, "Biscuit learned to sit today, only took forty treats."),
        (4, "Walking Biscuit in the rain is my new morning routine."),
    ],
    "city": [
        (4, "Found a great bakery two streets from my new flat in Rotterdam."),
        (4, "First month in Rotterdam done, the bridges still impress me."),
        (4, "Registered at the Rotterdam town hall, I am officially a resident."),
    ],
    "job": [
        (4, "The logistics planning team at Hafenwerk had lunch together today."),
        (4, "My probation period as planner at Hafenwerk ended, they are keeping me."),
        (4, "Planning the container schedule at Hafenwerk took all afternoon."),
    ],
    "marathon": [
        (4, "Picked up my start number for Leiden, race day is close."),
        (4, "Did a practice route along the Leiden canals, twenty-one kilometres done."),
        (4, "Carb loading before the half marathon in Leiden, lots of pasta."),
    ],
    "instrument": [
        (4, "Practised cello scales for an hour, my neighbours are patient."),
        (4, "Rented a better cello from the music shop, it sounds warmer."),
        (4, "Played my first short cello piece for Ines without stopping."),
    ],
    "language": [
        (5, "My Dutch teacher says my A2 course is going well, I study Dutch every week."),
        (5, "I am learning Dutch now, the course is on Monday and Thursday nights."),
    ],
    "car": [
        (5, "Our new car is a Skoda Octavia estate, green, with plenty of room."),
        (5, "Yes, the car we bought is the green Octavia, a Skoda estate from 2019."),
    ],
    "holiday": [
        (5, "Our September holiday is in the Azores, ten days on São Miguel and Pico."),
        (5, "Holiday plan confirmed: the Azores, whale watching and crater hikes."),
    ],
    "allergy": [
        (3, "Allergy season again, the pharmacy was full of people sneezing."),
        (3, "I read an article about food allergies becoming more common in adults."),
        (3, "The restaurant asked about allergies before taking our order, nice touch."),
    ],
    "book": [
        (3, "Book club met at Anna's place, we mostly talked and drank tea."),
        (3, "I bought three second-hand novels at the market, no idea when I will read them."),
        (3, "Our book club wants to read more non-fiction this year."),
    ],
    "birthday": [
        (3, "I am terrible at remembering birthdays, I need a calendar for them."),
        (3, "Lena and I talked on the phone for two hours about nothing."),
        (3, "Bought wrapping paper in bulk, there are so many birthdays in summer."),
    ],
    "coffee": [
        (3, "I had way too much coffee today, my hands are shaking."),
        (3, "The office coffee machine broke, everyone was grumpy until noon."),
        (3, "Tried a coffee tasting at the roastery, the Ethiopian beans were fruity."),
    ],
}

# Questions the conversations never answer: only weak, same-topic turns (grade 2).
UNANSWERED = [
    (
        "cat",
        "What is the name of Maya's cat?",
        [
            (2, "My landlord finally said pets are allowed in the building."),
            (2, "The cat café near the station has a waiting list now."),
        ],
    ),
    (
        "salary",
        "How much does Maya earn at Hafenwerk?",
        [
            (2, "Payday is on the twenty-fifth, which is always one week too late."),
            (2, "Talked about pay with a friend, everyone thinks they earn too little."),
        ],
    ),
    (
        "wedding",
        "When is Maya's wedding?",
        [
            (2, "My best friend asked me to be a witness at her wedding next spring."),
            (2, "Three wedding invitations on the fridge already, it is that season."),
        ],
    ),
]

# Handbook pages beyond the policy, FAQ, procedure and archive pages: (doc id, title,
# [(policy key, grade, sentence)]). The overview restates some policies (a second 4); the
# staff news states a few in full (a second 5).
HANDBOOK_PAGES = [
    (
        "benefits-overview",
        "Benefits at a glance",
        [
            ("travel", 4, "Business travellers get a daily meal allowance (45 euros)."),
            ("vacation", 4, "Vacation: 27 days a year for full-time staff."),
            ("parental", 4, "Parental leave: 16 paid weeks."),
            ("training", 4, "Training: 1,500 euros a year for courses and conferences."),
            ("pension", 4, "Pension: the company pays 8 percent of gross salary."),
        ],
    ),
    (
        "staff-news",
        "Staff news, spring edition",
        [
            (
                "remote",
                5,
                "Reminder: you may work remotely up to three days a week, agreed with your team.",
            ),
            ("laptop", 5, "IT reminds everyone that laptops are replaced every four years."),
            (
                "security",
                5,
                "Good news: passwords no longer expire and are changed only after a suspected leak.",
            ),
            ("overtime", 2, "The works council discussed overtime at its last meeting."),
            ("sick", 2, "Flu season is here: stay home if you feel unwell."),
        ],
    ),
]
